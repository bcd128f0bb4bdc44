"""Sysctls as the kernel applies them: `net.ipv6.conf.default.*` is copied into devices
created afterwards only, so it changes none of the devices a configuration names."""
from kcommon import *  # noqa: F403


@scenario(IDENTICAL)
def test_default_sysctls_leave_existing_devices(kernel):
    """conf.default.seg6_enabled=1 / seg6_require_hmac=1 after the devices exist: no effect (SRH at a local address dropped, no HMAC forwarded)"""
    me = ADDR6["eth0"]
    cfg = config("sysctl -w net.ipv6.conf.all.seg6_enabled=1", "sysctl -w net.ipv6.conf.default.seg6_enabled=1",
                 "sysctl -w net.ipv6.conf.default.seg6_require_hmac=1", seg6local("End"))
    frames = [rx(sr_pkt(me, [FINAL, me], 1)), rx(sr_pkt(SID, [FINAL, SID], 1))]
    kernel.run(cfg, frames).assert_identical(silent=[0])
