//! The checks, each made once: a kernel is prepared (`Prepared`) the first
//! time the builder sees it, found again by its descriptor address,
//! descriptor and symbol; a launch shape of a prepared kernel is checked and
//! kept as a template (`template.rs`) the first time it is seen. A
//! dispatch passed by value is resolved to its template here: the one the
//! previous transition's memo expects next, or the last one resolved, by
//! comparing the caller's values with its identity whole; else by look-up.

use super::template::TemplateIx;
use super::IbBuilder;
use crate::dispatch::{check_launch, KernelCode, Launch, Prepared};
use crate::error::EncodeError;
use crate::ib::KernelInfo;

impl IbBuilder {
    /// The template of a dispatch passed by value, and whether the caller
    /// named the kernel by the string the template remembers (else the
    /// template remembers this one now).
    #[inline(always)]
    pub(super) fn resolve(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        shape: (usize, u32),
    ) -> Result<(TemplateIx, bool), EncodeError> {
        let tables = &self.tables;
        // Gliding, `last` is not kept: the run knows what comes next.
        let gliding = (self.run.until != 0).then_some(self.run.next.template);
        let expected = gliding.or_else(|| {
            self.last
                .and_then(|last| tables.transitions.get(last.transition as usize))
                .and_then(|x| tables.transitions.get(x.next[0].1 as usize))
                .map(|next| next.template)
        });
        let expected = expected.unwrap_or(self.last_resolved);
        for t in [expected, self.last_resolved] {
            if let Some(tpl) = tables.templates.get(t as usize) {
                if tpl.matches(code, launch, shape) {
                    self.last_resolved = t;
                    return Ok((t, true));
                }
            }
        }
        self.resolve_slow(code, launch, shape)
    }

    #[inline(never)]
    fn resolve_slow(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        shape: (usize, u32),
    ) -> Result<(TemplateIx, bool), EncodeError> {
        let t = self.template_of(code, launch, shape)?;
        let same = self.tables.templates[t as usize].matches(code, launch, shape);
        if !same {
            self.tables.remember_symbol(t, code);
        }
        self.last_resolved = t;
        Ok((t, same))
    }

    /// The template of `code` launched as `launch` with kernarg `shape`
    /// (length, alignment), checked and made now if it is new.
    pub(super) fn template_of(
        &mut self,
        code: &KernelCode<'_>,
        launch: &Launch,
        shape: (usize, u32),
    ) -> Result<TemplateIx, EncodeError> {
        let k = self.kernel_index(code)?;
        match self.tables.find(k as u32, launch, shape) {
            Some(t) => Ok(t),
            None => self.new_template(k, code, launch, shape),
        }
    }

    /// Check a launch of prepared kernel `k` with a kernarg shape and
    /// remember it as a template.
    pub(super) fn new_template(
        &mut self,
        k: usize,
        code: &KernelCode<'_>,
        launch: &Launch,
        (len, align): (usize, u32),
    ) -> Result<TemplateIx, EncodeError> {
        let p = self.prepared[k];
        let st = check_launch(&p, launch, code.symbol)?;
        if p.sgprs.kernarg_ptr {
            if len < p.kernarg_size as usize {
                return Err(EncodeError::KernargTooShort {
                    symbol: code.symbol.to_string(),
                    need: p.kernarg_size,
                    got: len,
                });
            }
        } else if len != 0 {
            return Err(EncodeError::KernargUnused {
                symbol: code.symbol.to_string(),
                got: len,
            });
        }
        if !align.is_power_of_two() || align > 4096 {
            return Err(EncodeError::BadKernargAlign {
                symbol: code.symbol.to_string(),
                align,
            });
        }
        let fresh_image = !self.kernargs.immutable();
        let shape = (len, align);
        let t = self
            .tables
            .insert(k as u32, code, &p, launch, st, shape, fresh_image);
        // Kernarg room by the largest block seen, for what `reserve`
        // announced (a no-op while the capacity suffices).
        let left = self.reserved.saturating_sub(self.dispatch_count());
        let block = self.tables.max_stride as usize;
        self.kernargs.reserve(left.saturating_mul(block));
        Ok(t)
    }

    /// The prepared kernel `code` is, if it was prepared: kd_address
    /// identifies a loaded kernel for the IB's lifetime; the descriptor is
    /// compared too, and the symbol text unless it is the very same string.
    pub(super) fn find_kernel(&mut self, code: &KernelCode<'_>) -> Option<usize> {
        if code.family != self.family {
            return None;
        }
        let symbol = (code.symbol.as_ptr() as usize, code.symbol.len());
        let same_code = |i: usize| {
            self.prepared[i].kd_address == code.kd_address && self.descriptors[i] == code.descriptor
        };
        let last = self.last_kernel;
        if last < self.prepared.len()
            && same_code(last)
            && (symbol == self.last_symbol || self.kernels[last].symbol == code.symbol)
        {
            self.last_symbol = symbol;
            return Some(last);
        }
        let found = (0..self.prepared.len())
            .find(|&i| same_code(i) && self.kernels[i].symbol == code.symbol)?;
        self.last_kernel = found;
        self.last_symbol = symbol;
        Some(found)
    }

    /// The prepared kernel `code` is, prepared (checked) now if it is new.
    pub(super) fn kernel_index(&mut self, code: &KernelCode<'_>) -> Result<usize, EncodeError> {
        if let Some(k) = self.find_kernel(code) {
            return Ok(k);
        }
        let p = Prepared::new(code, self.family, self.limits, self.opts.trap_handler)?;
        self.prepared.push(p);
        self.descriptors.push(code.descriptor);
        self.kernels.push(KernelInfo {
            symbol: code.symbol.to_string(),
            kd_address: code.kd_address,
        });
        self.last_kernel = self.prepared.len() - 1;
        self.last_symbol = (code.symbol.as_ptr() as usize, code.symbol.len());
        Ok(self.last_kernel)
    }
}
