"""Flavours the kernel accepts on a behaviour that does not implement them.

On this kernel `flavors` is implemented for End (psp, next-csid) and End.X (next-csid);
usp/usd there, and psp on End.X, are refused ("Unsupported Flavor operation(s)"). On
End.T the attribute is accepted and ignored (input_action_end_t has no flavour
processing, `ip -6 route show` does not list it), so a config that sr6 and the kernel
both accept means different things: sr6 applies PSP and USD to End.T (RFC 8986 §4.16)."""
from kcommon import *  # noqa: F403

TABLE100 = "ip -6 route add fc00:2::/48 via fc00:13::2 dev eth2 table 100"
REASON = ("Linux accepts `flavors psp|usp|usd` on End.T and ignores them (input_action_end_t has no "
          "flavour processing): PSP leaves the SRH in at Segments Left 0, a USD packet at the last "
          "segment is dropped as any End.T packet with Segments Left 0; sr6 applies them")


@scenario(DIFFERENCE(REASON, "RFC 8986 §4.16"))
def test_end_t_psp_usd(kernel):
    """End.T `flavors psp` at the penultimate segment, `flavors usd` at the last (inner IPv6, SRH or none)"""
    cfg = config(TABLE100, seg6local("End.T", "table 100 flavors psp"),
                 seg6local("End.T", "table 100 flavors usd", sid=SID2))
    inner = udp6(src="fc00:a::200", dst="fc00:2::77", hlim=30)
    frames = [rx(sr_pkt(SID, [FINAL, SID], 1)),                          # PSP applies
              rx(sr_pkt(SID, [FINAL, SEG_B2, SID], 2)),                  # PSP does not apply yet
              rx(sr_pkt(SID2, [SID2, PREV], 0, nh=NH_IPV6, inner=inner)),  # USD, SRH with SL 0
              rx(IPv6(src=HOST_A, dst=SID2, nh=NH_IPV6) / inner)]        # USD, no SRH
    r = kernel.run(cfg, frames)
    # Penultimate segment: the kernel keeps the SRH (SL 0); PSP pops it (§4.16.1).
    r.expect_kernel(0, eth2=[tx(sr_pkt(FINAL, [FINAL, SID], 0, hlim=63), "eth2")])
    r.expect_sr6(0, eth2=[tx(IPv6(src=HOST_A, dst=FINAL, hlim=63, nh=NH_UDP) / Raw(udp_bytes(HOST_A, FINAL)),
                             "eth2")])
    r.assert_identical(indices=[1])
    # Last segment, inner IPv6: the kernel drops; USD decapsulates and looks the inner
    # packet up in End.T's table (§4.16.3).
    out = inner.copy()
    out.hlim = 29
    for i in (2, 3):
        r.expect_kernel(i)
        r.expect_sr6(i, eth2=[tx(out, "eth2")])
