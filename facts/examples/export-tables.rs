//! Print every PM4 fact relaunch relies on (register tables, opcodes, event
//! types, packet fields) as JSON, for `scripts/check-registers` to compare
//! with the kernel headers.

use relaunch_facts::packet::{checked_fields, event, ib_control, PACKETS};
use relaunch_facts::regs::{table, GC_BASE_SEG0, LDS_GRANULE_BYTES, RSRC2_LDS_SIZE, SH_REG_START};
use relaunch_facts::Family;
use serde_json::{json, Value};

fn field_json(f: &relaunch_facts::Field) -> Value {
    json!({ "name": f.name, "lo": f.lo, "hi": f.hi })
}

fn main() {
    let mut families = serde_json::Map::new();
    for family in Family::ALL {
        let regs: Vec<Value> = table(family)
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "sh_offset": r.offset,
                    "gc_offset": r.gc_offset(),
                    "class": r.class.name(),
                    "fields": r.fields.iter().map(field_json).collect::<Vec<_>>(),
                })
            })
            .collect();
        families.insert(family.name().to_string(), Value::Array(regs));
    }
    let events: Vec<Value> = [
        event::CS_PARTIAL_FLUSH,
        event::CACHE_FLUSH_AND_INV_TS_EVENT,
        event::BOTTOM_OF_PIPE_TS,
        event::CS_DONE,
    ]
    .iter()
    .map(|&e| json!({ "name": event::name(e), "value": e }))
    .collect();
    let out = json!({
        "sh_reg_start": SH_REG_START,
        "gc_base_seg0": GC_BASE_SEG0,
        "lds_granule_bytes": LDS_GRANULE_BYTES,
        "lds_size_field": field_json(&RSRC2_LDS_SIZE),
        "ib_size_field": field_json(&ib_control::IB_SIZE),
        "opcodes": PACKETS.iter().map(|p| json!({ "name": p.name, "value": p.opcode })).collect::<Vec<_>>(),
        "events": events,
        "packet_fields": checked_fields()
            .iter()
            .map(|(g, f)| json!({ "group": g, "name": f.name, "lo": f.lo, "hi": f.hi }))
            .collect::<Vec<_>>(),
        "families": families,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&out).expect("JSON of plain values")
    );
}
