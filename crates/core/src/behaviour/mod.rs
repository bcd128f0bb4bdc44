//! SRv6 endpoint behaviours (RFC 8986 §4) and head-end behaviours (§5).
//!
//! [`descriptor`] holds the behaviour table. Packet processing: [`endpoint`] (what every
//! local SID shares), [`end`] (End, End.X, End.T), [`upper`] (Segments Left 0:
//! decapsulation behaviours and flavours), [`binding`] (End.B6*), [`headend`] (H.*),
//! with [`srh_ops`] and [`hmac_check`] as shared steps.

pub mod binding;
pub mod descriptor;
pub mod end;
pub mod endpoint;
pub mod headend;
pub mod hmac_check;
pub mod srh_ops;
pub mod upper;

pub use descriptor::{by_keyword, descriptor, Descriptor, Flavor, Param, DESCRIPTORS};

/// Every seg6local action sr6 implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BehaviorKind {
    End,
    EndX,
    EndT,
    EndDx2,
    EndDx6,
    EndDx4,
    EndDt6,
    EndDt4,
    EndDt46,
    EndB6,
    EndB6Encaps,
    EndB6EncapsRed,
}

impl BehaviorKind {
    pub const ALL: [BehaviorKind; 12] = [
        BehaviorKind::End,
        BehaviorKind::EndX,
        BehaviorKind::EndT,
        BehaviorKind::EndDx2,
        BehaviorKind::EndDx6,
        BehaviorKind::EndDx4,
        BehaviorKind::EndDt6,
        BehaviorKind::EndDt4,
        BehaviorKind::EndDt46,
        BehaviorKind::EndB6,
        BehaviorKind::EndB6Encaps,
        BehaviorKind::EndB6EncapsRed,
    ];

    pub fn keyword(self) -> &'static str {
        descriptor(self).keyword
    }
}
