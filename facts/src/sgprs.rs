//! Which user SGPRs a kernel is given, from its descriptor and its family's
//! layout rules (AMDGPUUsage, "Initial Kernel Execution State"). The
//! encoder writes them, the verdict counts them, the simulator checks them:
//! all three read these functions.

use crate::descriptor::{rsrc2, KernelDescriptor};
use crate::family::{UserSgprRules, MAX_USER_SGPRS};

/// The user SGPRs the PM4 encoder delivers for `kd`, in AMDGPUUsage's
/// order: the private segment buffer (four dwords, when asked, on families
/// that have one: the scratch V# for a kernel with scratch, else zeros),
/// the address of the synthesized dispatch packet (two dwords, when
/// asked), the queue pointer (two zero dwords), the kernarg pointer (two
/// dwords, when asked), the dispatch id (two zero dwords), flat scratch
/// init (two dwords: the scratch backing's base) and the private segment
/// size (one dword), when asked. The queue pointer and dispatch id have no
/// value on the PM4 path: the verdict accepts them only for code that
/// provably never reads them, so their zeros are never seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeliveredSgprs {
    /// 4 when the private segment buffer is delivered, else 0.
    pub private_segment_dwords: u8,
    pub dispatch_ptr: bool,
    /// Two zero dwords where the queue pointer goes.
    pub queue_ptr: bool,
    pub kernarg_ptr: bool,
    /// Two zero dwords where the dispatch id goes.
    pub dispatch_id: bool,
    pub flat_scratch_init: bool,
    pub private_segment_size: bool,
}

impl DeliveredSgprs {
    pub fn of(kd: &KernelDescriptor, rules: UserSgprRules) -> Self {
        let psb = kd.wants_private_segment_buffer() && rules.private_segment_buffer;
        DeliveredSgprs {
            private_segment_dwords: if psb { 4 } else { 0 },
            dispatch_ptr: kd.wants_dispatch_ptr(),
            queue_ptr: kd.wants_queue_ptr(),
            kernarg_ptr: kd.wants_kernarg_segment_ptr(),
            dispatch_id: kd.wants_dispatch_id(),
            flat_scratch_init: kd.wants_flat_scratch_init(),
            private_segment_size: kd.wants_private_segment_size(),
        }
    }

    /// (delivered, dwords) of each in order: private segment buffer,
    /// dispatch ptr, queue ptr, kernarg ptr, dispatch id, flat scratch
    /// init, private segment size.
    const fn slots(self) -> [(bool, u32); 7] {
        [
            (
                self.private_segment_dwords > 0,
                self.private_segment_dwords as u32,
            ),
            (self.dispatch_ptr, 2),
            (self.queue_ptr, 2),
            (self.kernarg_ptr, 2),
            (self.dispatch_id, 2),
            (self.flat_scratch_init, 2),
            (self.private_segment_size, 1),
        ]
    }

    /// Index of slot `k` of [`Self::slots`] among them, if delivered.
    const fn at(self, k: usize) -> Option<u32> {
        let slots = self.slots();
        if !slots[k].0 {
            return None;
        }
        let mut at = 0;
        let mut i = 0;
        while i < k {
            if slots[i].0 {
                at += slots[i].1;
            }
            i += 1;
        }
        Some(at)
    }

    /// Index of the dispatch packet pointer pair among them, if delivered.
    pub const fn dispatch_ptr_at(self) -> Option<u32> {
        self.at(1)
    }

    /// Index of the kernarg pointer pair among them, if delivered.
    pub const fn kernarg_ptr_at(self) -> Option<u32> {
        self.at(3)
    }

    /// Index of the flat scratch init pair among them, if delivered.
    pub const fn flat_scratch_init_at(self) -> Option<u32> {
        self.at(5)
    }

    /// Their total in dwords.
    pub const fn count(self) -> u32 {
        let slots = self.slots();
        let mut n = 0;
        let mut i = 0;
        while i < slots.len() {
            if slots[i].0 {
                n += slots[i].1;
            }
            i += 1;
        }
        n
    }
}

/// The number of user SGPRs [`DeliveredSgprs::of`] gives.
pub fn delivered_user_sgprs(kd: &KernelDescriptor, rules: UserSgprRules) -> u32 {
    DeliveredSgprs::of(kd, rules).count()
}

/// User SGPRs every enabled `kernel_code_properties` bit takes, refused
/// or not: private segment buffer 4, dispatch ptr 2, queue ptr 2, kernarg
/// ptr 2, dispatch id 2, flat scratch init 2, private segment size 1.
/// Equals [`delivered_user_sgprs`] except where a family has no private
/// segment buffer to deliver.
pub fn enabled_user_sgprs(kd: &KernelDescriptor) -> u32 {
    [
        (kd.wants_private_segment_buffer(), 4),
        (kd.wants_dispatch_ptr(), 2),
        (kd.wants_queue_ptr(), 2),
        (kd.wants_kernarg_segment_ptr(), 2),
        (kd.wants_dispatch_id(), 2),
        (kd.wants_flat_scratch_init(), 2),
        (kd.wants_private_segment_size(), 1),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, n)| n)
    .sum()
}

/// Workgroup system SGPRs RSRC2 enables (TGID_X/Y/Z, TG_SIZE). The
/// scratch wave offset SGPR is left out on purpose: see [`user_sgpr_padding`].
fn workgroup_sgpr_count(kd: &KernelDescriptor) -> u32 {
    [
        rsrc2::TGID_X_EN,
        rsrc2::TGID_Y_EN,
        rsrc2::TGID_Z_EN,
        rsrc2::TG_SIZE_EN,
    ]
    .iter()
    .filter(|&&bit| kd.compute_pgm_rsrc2 & bit != 0)
    .count() as u32
}

/// User SGPRs RSRC2 declares beyond the enabled ones, carrying nothing.
///
/// gfx1100 and gfx1102 need at least 16 user + system SGPRs initialised
/// (LLVM's "user SGPR init 16" hardware bug workaround), so clang raises the
/// RSRC2 count until user + workgroup-id/info SGPRs = 16; the scratch wave
/// offset is not counted, since the compiler pads before it knows whether
/// the kernel uses scratch. The rule is accepted on every target (a kernel
/// never reads the extra SGPRs; the encoder writes zeros to their USER_DATA
/// registers). Any other surplus is not explained and stays a mismatch
/// (fail closed).
pub fn user_sgpr_padding(kd: &KernelDescriptor) -> u32 {
    let count = kd.user_sgpr_count();
    let enabled = enabled_user_sgprs(kd);
    let padded_to_16 = count + workgroup_sgpr_count(kd) == MAX_USER_SGPRS;
    if count > enabled && padded_to_16 && kd.kernarg_preload == 0 {
        count - enabled
    } else {
        0
    }
}
