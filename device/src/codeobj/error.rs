//! Why a code object (or offload bundle) could not be read. One variant per
//! kind of damage, each a one-line message naming what was wrong.

/// A code object, bundle or metadata note that cannot be read completely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeObjectError {
    #[error("file is empty")]
    Empty,
    #[error("not an ELF file or offload bundle (magic {found:02x?})")]
    NotElf { found: Vec<u8> },
    #[error("truncated {what}: needs {needed} bytes at offset {offset}, file has {len}")]
    Truncated {
        what: &'static str,
        offset: u64,
        needed: u64,
        len: u64,
    },
    #[error("ELF class {0} is not ELF64 (AMDGPU code objects are 64-bit)")]
    WrongClass(u8),
    #[error("ELF data encoding {0} is not little-endian")]
    WrongEndian(u8),
    #[error("ELF machine {0} is not EM_AMDGPU (224)")]
    WrongMachine(u16),
    #[error("ELF OS/ABI {0} is not ELFOSABI_AMDGPU_HSA (64)")]
    WrongOsAbi(u8),
    #[error("unknown code object version (ELF ABI version {0}); relaunch reads V4 (2), V5 (3) and V6 (4)")]
    UnknownVersion(u8),
    #[error("ELF {what} entry size is {found}, expected {expected}")]
    BadEntrySize {
        what: &'static str,
        found: u64,
        expected: u64,
    },
    #[error("too many {what}: {count} (limit {limit})")]
    TooMany {
        what: &'static str,
        count: u64,
        limit: u64,
    },
    #[error("{what} spans bytes {offset}..{offset}+{size}, beyond the file's {len} bytes")]
    OutOfBounds {
        what: String,
        offset: u64,
        size: u64,
        len: u64,
    },
    #[error("{first} and {second} overlap in the file")]
    Overlap { first: String, second: String },
    #[error("loadable segment {index} has file size {filesz} larger than memory size {memsz}")]
    SegmentSizes {
        index: usize,
        filesz: u64,
        memsz: u64,
    },
    #[error(
        "loadable segment {index} (vaddr 0x{vaddr:x}, {memsz} bytes) does not fit \
         the {limit}-byte image limit"
    )]
    ImageTooLarge {
        index: usize,
        vaddr: u64,
        memsz: u64,
        limit: u64,
    },
    #[error(
        "{what}; the file accounts for at most {justified} (NOBITS sections plus alignment \
         padding), so the code object is refused rather than committing that memory"
    )]
    UnjustifiedImage { what: String, justified: u64 },
    #[error("section header string table index {0} is out of range")]
    BadStringTableIndex(u32),
    #[error("string at offset {offset} in {table} is not NUL-terminated UTF-8")]
    BadString { table: &'static str, offset: u64 },
    #[error("relocation of type {kind} at 0x{offset:x} cannot be applied: {why}")]
    Relocation { offset: u64, kind: u32, why: String },
    #[error("no symbol table (.symtab or .dynsym): kernel descriptors cannot be found")]
    NoSymbolTable,
    #[error("symbol table links to section {0}, which is not a string table")]
    BadSymbolStrings(u32),
    #[error("malformed note at offset {offset}: {reason}")]
    BadNote { offset: u64, reason: &'static str },
    #[error("no NT_AMDGPU_METADATA note (owner \"AMDGPU\", type 32): not a code object V4/V5")]
    MissingMetadata,
    #[error("the metadata notes disagree on {what}: {first} and {second}")]
    MetadataConflict {
        what: &'static str,
        first: String,
        second: String,
    },
    #[error("kernel {kernel} is described differently by two metadata notes")]
    ConflictingKernel { kernel: String },
    #[error(
        "no metadata note names amdhsa.target and ELF e_flags {e_flags:#x} name no known processor"
    )]
    MissingTarget { e_flags: u32 },
    #[error("metadata note is not valid MessagePack: {0}")]
    MetadataEncoding(String),
    #[error("metadata: {0}")]
    Metadata(String),
    #[error("metadata target {target:?}: {reason}")]
    MetadataTarget { target: String, reason: String },
    #[error("ELF e_flags name {flags} but the metadata says {metadata}")]
    TargetMismatch { flags: String, metadata: String },
    #[error("kernel {kernel}: descriptor symbol {symbol} not found in the symbol table")]
    MissingDescriptor { kernel: String, symbol: String },
    #[error(
        "kernel {kernel}: descriptor at 0x{vaddr:x} ({size} bytes) is not inside \
         any loadable segment's file bytes"
    )]
    DescriptorOutsideSegments {
        kernel: String,
        vaddr: u64,
        size: u64,
    },
    #[error("kernel {kernel}: code entry 0x{entry:x} is not inside a loadable segment")]
    EntryOutsideSegments { kernel: String, entry: u64 },
    #[error(
        "kernel {kernel}: {field} is {metadata} in the metadata but {descriptor} in the descriptor"
    )]
    DescriptorDisagrees {
        kernel: String,
        field: &'static str,
        metadata: u64,
        descriptor: u64,
    },
    #[error("kernel {kernel}: argument {index} ({kind}) at {offset}+{size} lies outside the {kernarg_size}-byte kernarg segment")]
    ArgumentOutsideKernarg {
        kernel: String,
        index: usize,
        kind: String,
        offset: u64,
        size: u64,
        kernarg_size: u64,
    },
    #[error(
        "code object is built for the generic target {generic}, which runs on {covers}: \
         name the processor to read it for"
    )]
    GenericNeedsProcessor { generic: String, covers: String },
    #[error("code object is built for {found}, not {wanted}")]
    WrongTarget { wanted: String, found: String },
    #[error("offload bundle: {0}")]
    Bundle(String),
    #[error("offload bundle has no entry for target {wanted}; available: {available}")]
    NoBundleEntry { wanted: String, available: String },
    #[error(
        "offload bundle holds several GPU code objects ({available}): pass a target to pick one"
    )]
    AmbiguousBundle { available: String },
}
