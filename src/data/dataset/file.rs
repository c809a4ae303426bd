//! A binned dataset as a file, to bin once and fit in other processes.
//!
//! Layout: the 8-byte tag `MAGIC`, the header's length (u64, little
//! endian), the header (JSON: format, versions, the bin mapper, the codes'
//! layout, the extra arrays' names and lengths and the caller's metadata),
//! the arrays' bytes (little endian, in the header's order: the codes, then
//! the extras), then an FNV-1a checksum (u64) of every byte before it.
//!
//! Loading trusts nothing in the file: every size is checked against the
//! file's length before anything is allocated (allocations are fallible as
//! well), and every code is checked against its feature's bins, which the
//! histogram kernels index without bounds checks.
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::BinnedDataset;
use super::codes::BinCodes;
use super::feature_use::FeatureUse;
use super::sparse_rows::SparseRows;
use crate::cancel::Cancel;
use crate::data::binning::{BinMapper, FeatureBins};
use crate::data::feature_table::FeatureTable;
use crate::error::{Result, RgbmError};
use crate::params::MAX_CATEGORY;

/// The first bytes of every binned dataset file.
pub const MAGIC: &[u8; 8] = b"RGBMBINS";
/// The header's `format` entry.
const FORMAT: &str = "rgbm_rs binned dataset";
/// Version of the file layout this build writes and reads.
pub const DATASET_FORMAT_VERSION: u32 = 1;
/// The package version files are written by, and the only one read.
const PACKAGE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// An array stored along with the codes (labels, weights, ...).
#[derive(Clone, Debug, PartialEq)]
pub enum Extra {
    F64(Vec<f64>),
    I64(Vec<i64>),
}

/// What the file holds besides the codes: named arrays and the caller's
/// metadata (JSON text, stored as it is).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extras {
    pub arrays: Vec<(String, Extra)>,
    pub meta: String,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Dtype {
    U8,
    U16,
    U32,
    U64,
    F64,
    I64,
}

impl Dtype {
    fn size(self) -> u64 {
        match self {
            Dtype::U8 => 1,
            Dtype::U16 => 2,
            Dtype::U32 => 4,
            Dtype::U64 | Dtype::F64 | Dtype::I64 => 8,
        }
    }
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Block {
    name: String,
    dtype: Dtype,
    len: u64,
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
enum Layout {
    /// Feature-major codes (block "codes").
    Dense,
    /// Sparse rows (blocks "row_ptr" and "bins") at these histogram offsets.
    Sparse {
        bin_offsets: Vec<u64>,
        default_bins: Vec<Option<u64>>,
    },
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Header {
    format: String,
    format_version: u32,
    package_version: String,
    n_rows: u64,
    n_features: u64,
    max_bins: u64,
    min_data_in_bin: u64,
    min_rows: u64,
    /// The features with more than one value bin, by position.
    features: Vec<(u64, FeatureBins)>,
    layout: Layout,
    blocks: Vec<Block>,
    meta: String,
}

fn corrupt(path: &Path, why: impl std::fmt::Display) -> RgbmError {
    RgbmError::ModelFormat(format!(
        "{} is not a readable rgbm_rs binned dataset file: {why}",
        path.display()
    ))
}

fn io(path: &Path, e: std::io::Error) -> RgbmError {
    RgbmError::Io(format!("{}: {e}", path.display()))
}

/// FNV-1a over the bytes written or read.
struct Checksum(u64);

impl Checksum {
    fn new() -> Self {
        Checksum(0xcbf2_9ce4_8422_2325)
    }
    fn update(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Numbers stored as their little-endian bytes.
trait Pod: Copy + Default {
    const DTYPE: Dtype;
    fn put(self, out: &mut Vec<u8>);
    fn take(bytes: &[u8]) -> Self;
}

macro_rules! pod {
    ($t:ty, $d:expr) => {
        impl Pod for $t {
            const DTYPE: Dtype = $d;
            #[inline]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn take(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    };
}
pod!(u8, Dtype::U8);
pod!(u16, Dtype::U16);
pod!(u32, Dtype::U32);
pod!(u64, Dtype::U64);
pod!(f64, Dtype::F64);
pod!(i64, Dtype::I64);

/// Bytes written per buffered chunk.
const CHUNK: usize = 1 << 16;

struct Writer<W: Write> {
    out: W,
    sum: Checksum,
    buf: Vec<u8>,
}

impl<W: Write> Writer<W> {
    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.sum.update(b);
        self.out.write_all(b)
    }
    fn values<T: Pod>(&mut self, values: &[T], cancel: &Cancel) -> Result<()> {
        let per = CHUNK / std::mem::size_of::<T>();
        for part in values.chunks(per.max(1)) {
            cancel.check()?;
            self.buf.clear();
            for &v in part {
                v.put(&mut self.buf);
            }
            let buf = std::mem::take(&mut self.buf);
            let r = self.bytes(&buf);
            self.buf = buf;
            r.map_err(|e| RgbmError::Io(e.to_string()))?;
        }
        Ok(())
    }
}

impl BinnedDataset {
    /// Writes the dataset and `extras` to `path`, atomically: to a
    /// temporary file next to it, synced, then renamed over it (a path that
    /// exists and is no regular file, e.g. a device, is written in place).
    pub fn save(&self, path: &Path, extras: &Extras, cancel: &Cancel) -> Result<()> {
        let target = match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => return self.write_to(path, path, extras, cancel),
            Ok(_) => std::fs::canonicalize(path).map_err(|e| io(path, e))?,
            Err(_) => path.to_path_buf(),
        };
        let tmp = temporary_next_to(&target);
        let written = self
            .write_to(&tmp, path, extras, cancel)
            .and_then(|()| std::fs::rename(&tmp, &target).map_err(|e| io(path, e)));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    fn write_to(&self, file: &Path, shown: &Path, extras: &Extras, cancel: &Cancel) -> Result<()> {
        let f = File::create(file).map_err(|e| io(shown, e))?;
        let mut w = Writer {
            out: BufWriter::with_capacity(CHUNK, f),
            sum: Checksum::new(),
            buf: Vec::with_capacity(CHUNK),
        };
        let (layout, mut blocks) = match (&self.codes, &self.sparse_rows) {
            (Some(codes), _) => {
                let (dtype, len) = match codes {
                    BinCodes::U8(c) => (Dtype::U8, c.len()),
                    BinCodes::U16(c) => (Dtype::U16, c.len()),
                };
                let block = Block {
                    name: "codes".into(),
                    dtype,
                    len: len as u64,
                };
                (Layout::Dense, vec![block])
            }
            (None, Some(rows)) => {
                let layout = Layout::Sparse {
                    bin_offsets: self.bin_offsets.iter().map(|&o| o as u64).collect(),
                    default_bins: self
                        .default_bins
                        .iter()
                        .map(|d| d.map(|b| b as u64))
                        .collect(),
                };
                let blocks = vec![
                    Block {
                        name: "row_ptr".into(),
                        dtype: Dtype::U64,
                        len: rows.row_ptr.len() as u64,
                    },
                    Block {
                        name: "bins".into(),
                        dtype: Dtype::U32,
                        len: rows.bins.len() as u64,
                    },
                ];
                (layout, blocks)
            }
            (None, None) => unreachable!("a dataset keeps codes or sparse rows"),
        };
        for (name, a) in &extras.arrays {
            let (dtype, len) = match a {
                Extra::F64(v) => (Dtype::F64, v.len()),
                Extra::I64(v) => (Dtype::I64, v.len()),
            };
            blocks.push(Block {
                name: name.clone(),
                dtype,
                len: len as u64,
            });
        }
        let features = self
            .mapper
            .features
            .iter()
            .enumerate()
            .filter(|(_, fb)| **fb != FeatureBins::single())
            .map(|(j, fb)| (j as u64, fb.clone()))
            .collect();
        let header = Header {
            format: FORMAT.into(),
            format_version: DATASET_FORMAT_VERSION,
            package_version: PACKAGE_VERSION.into(),
            n_rows: self.n_rows as u64,
            n_features: self.n_features() as u64,
            max_bins: self.mapper.max_bins as u64,
            min_data_in_bin: self.mapper.min_data_in_bin as u64,
            min_rows: self.min_rows as u64,
            features,
            layout,
            blocks,
            meta: extras.meta.clone(),
        };
        let text = serde_json::to_vec(&header)
            .map_err(|e| RgbmError::ModelFormat(format!("cannot write the header: {e}")))?;
        let ioe = |e: std::io::Error| io(shown, e);
        w.bytes(MAGIC).map_err(ioe)?;
        w.bytes(&(text.len() as u64).to_le_bytes()).map_err(ioe)?;
        w.bytes(&text).map_err(ioe)?;
        match (&self.codes, &self.sparse_rows) {
            (Some(BinCodes::U8(c)), _) => w.values(c, cancel)?,
            (Some(BinCodes::U16(c)), _) => w.values(c, cancel)?,
            (None, Some(rows)) => {
                let ptr: Vec<u64> = rows.row_ptr.iter().map(|&p| p as u64).collect();
                w.values(&ptr, cancel)?;
                w.values(&rows.bins, cancel)?;
            }
            (None, None) => unreachable!("a dataset keeps codes or sparse rows"),
        }
        for (_, a) in &extras.arrays {
            match a {
                Extra::F64(v) => w.values(v, cancel)?,
                Extra::I64(v) => w.values(v, cancel)?,
            }
        }
        let sum = w.sum.0.to_le_bytes();
        w.out.write_all(&sum).map_err(ioe)?;
        let f = w.out.into_inner().map_err(|e| io(shown, e.into_error()))?;
        f.sync_all().map_err(ioe)?;
        Ok(())
    }

    /// Reads a file `save` wrote: the dataset and its extras. A file of
    /// another format or version, or damaged, is a `ModelFormat` error.
    pub fn load(path: &Path, cancel: &Cancel) -> Result<(BinnedDataset, Extras)> {
        let f = File::open(path).map_err(|e| io(path, e))?;
        let file_len = f.metadata().map_err(|e| io(path, e))?.len();
        let mut r = Reader {
            inp: BufReader::with_capacity(CHUNK, f),
            sum: Checksum::new(),
            left: file_len,
            path,
        };
        let mut magic = [0u8; 8];
        r.exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(corrupt(
                path,
                "it does not start with the rgbm_rs binned dataset tag",
            ));
        }
        let mut len = [0u8; 8];
        r.exact(&mut len)?;
        let header_len = u64::from_le_bytes(len);
        if header_len > r.left.saturating_sub(8) {
            return Err(corrupt(
                path,
                "the header is longer than the file (truncated?)",
            ));
        }
        let mut text = crate::alloc::filled_vec(header_len as usize, 0u8, "the file header")?;
        r.exact(&mut text)?;
        let header = parse_header(path, &text)?;
        drop(text);
        // Every block's size, against what the file holds.
        let mut payload: u64 = 0;
        for b in &header.blocks {
            let bytes = b
                .len
                .checked_mul(b.dtype.size())
                .ok_or_else(|| corrupt(path, format!("block {:?} is too large", b.name)))?;
            payload = payload
                .checked_add(bytes)
                .ok_or_else(|| corrupt(path, "the blocks are too large"))?;
        }
        if payload.checked_add(8) != Some(r.left) {
            return Err(corrupt(
                path,
                format!(
                    "the header describes {} bytes of data, the file has {} (truncated or damaged)",
                    payload,
                    r.left.saturating_sub(8)
                ),
            ));
        }
        let n = usize::try_from(header.n_rows).map_err(|_| corrupt(path, "n_rows is too large"))?;
        let p = usize::try_from(header.n_features)
            .map_err(|_| corrupt(path, "n_features is too large"))?;
        if n == 0 || p == 0 {
            return Err(corrupt(path, "it has no rows or no features"));
        }
        let mapper = mapper_of(path, &header, p)?;
        let blocks = &header.blocks;
        let mut at = 0;
        let mut next = |name: &str, dtype: Dtype| -> Result<u64> {
            let b = blocks
                .get(at)
                .filter(|b| b.name == name && b.dtype == dtype)
                .ok_or_else(|| corrupt(path, format!("block {name:?} ({dtype:?}) is missing")))?;
            at += 1;
            Ok(b.len)
        };
        let min_rows = usize::try_from(header.min_rows).unwrap_or(usize::MAX);
        let data = match &header.layout {
            Layout::Dense => {
                let want = n
                    .checked_mul(p)
                    .ok_or_else(|| corrupt(path, "n_rows * n_features overflows"))?;
                let codes = if mapper.fits_u8() {
                    let len = next("codes", Dtype::U8)?;
                    BinCodes::U8(r.values(len, want, cancel)?)
                } else {
                    let len = next("codes", Dtype::U16)?;
                    BinCodes::U16(r.values(len, want, cancel)?)
                };
                check_codes(path, &codes, n, &mapper)?;
                BinnedDataset::from_codes(n, mapper, codes, min_rows, cancel)?
            }
            Layout::Sparse {
                bin_offsets,
                default_bins,
            } => {
                let len = next("row_ptr", Dtype::U64)?;
                let ptr: Vec<u64> = r.values(len, n + 1, cancel)?;
                let len = next("bins", Dtype::U32)?;
                let bins: Vec<u32> = r.values(len, len as usize, cancel)?;
                let (features, offsets) =
                    sparse_layout(path, bin_offsets, default_bins, &mapper, p)?;
                let row_ptr = check_sparse_rows(path, &ptr, &bins, *offsets.last().unwrap_or(&0))?;
                drop(ptr);
                let rows = SparseRows { row_ptr, bins };
                BinnedDataset::from_sparse_rows(n, mapper, features, offsets, rows, min_rows)?
            }
        };
        let mut arrays = Vec::new();
        for b in &blocks[at..] {
            let len = usize::try_from(b.len).map_err(|_| corrupt(path, "a block is too large"))?;
            let a = match b.dtype {
                Dtype::F64 => Extra::F64(r.values(b.len, len, cancel)?),
                Dtype::I64 => Extra::I64(r.values(b.len, len, cancel)?),
                d => return Err(corrupt(path, format!("block {:?} has dtype {d:?}", b.name))),
            };
            arrays.push((b.name.clone(), a));
        }
        let expected = r.sum.0;
        let mut sum = [0u8; 8];
        r.inp
            .read_exact(&mut sum)
            .map_err(|_| corrupt(path, "the checksum is missing (truncated)"))?;
        if u64::from_le_bytes(sum) != expected {
            return Err(corrupt(
                path,
                "its checksum does not match its contents (damaged)",
            ));
        }
        let extras = Extras {
            arrays,
            meta: header.meta,
        };
        Ok((data, extras))
    }
}

/// A fresh name in `target`'s folder for the file that replaces it.
fn temporary_next_to(target: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = target
        .file_name()
        .map_or_else(|| "dataset".into(), |s| s.to_string_lossy().into_owned());
    let unique = format!(
        ".{name}.{}-{nanos}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    target.with_file_name(unique)
}

struct Reader<'p, R: Read> {
    inp: R,
    sum: Checksum,
    /// Bytes of the file not read yet.
    left: u64,
    path: &'p Path,
}

impl<R: Read> Reader<'_, R> {
    fn exact(&mut self, buf: &mut [u8]) -> Result<()> {
        self.inp
            .read_exact(buf)
            .map_err(|_| corrupt(self.path, "it ends early (truncated)"))?;
        self.sum.update(buf);
        self.left = self.left.saturating_sub(buf.len() as u64);
        Ok(())
    }

    /// A block of `len` values, which must be `want`.
    fn values<T: Pod>(&mut self, len: u64, want: usize, cancel: &Cancel) -> Result<Vec<T>> {
        if len != want as u64 {
            return Err(corrupt(
                self.path,
                format!(
                    "a block of {:?} holds {len} values, {want} expected",
                    T::DTYPE
                ),
            ));
        }
        let mut out = crate::alloc::filled_vec(want, T::default(), "a block of the file")?;
        let size = std::mem::size_of::<T>();
        let mut buf = vec![0u8; CHUNK - CHUNK % size];
        for part in out.chunks_mut(buf.len() / size) {
            cancel.check()?;
            let bytes = &mut buf[..std::mem::size_of_val(part)];
            self.exact(bytes)?;
            for (v, b) in part.iter_mut().zip(bytes.chunks_exact(size)) {
                *v = T::take(b);
            }
        }
        Ok(out)
    }
}

fn parse_header(path: &Path, text: &[u8]) -> Result<Header> {
    // The versions first, so that a file of another version says so rather
    // than failing on a field it names differently.
    #[derive(Deserialize)]
    struct Versions {
        format: Option<String>,
        format_version: Option<u32>,
        package_version: Option<String>,
    }
    let v: Versions =
        serde_json::from_slice(text).map_err(|e| corrupt(path, format!("bad header: {e}")))?;
    if v.format.as_deref() != Some(FORMAT) {
        return Err(corrupt(path, "its header names another format"));
    }
    let version = v.package_version.unwrap_or_default();
    if version != PACKAGE_VERSION || v.format_version != Some(DATASET_FORMAT_VERSION) {
        return Err(RgbmError::ModelFormat(format!(
            "{} was written by rgbm_rs {version} (dataset format {}), this is rgbm_rs {PACKAGE_VERSION} \
             (format {DATASET_FORMAT_VERSION}): bins are not kept across versions; build the Dataset \
             from its rows again",
            path.display(),
            v.format_version
                .map_or_else(|| "?".into(), |f| f.to_string()),
        )));
    }
    serde_json::from_slice(text).map_err(|e| corrupt(path, format!("bad header: {e}")))
}

/// The bin mapper the header describes, checked: thresholds increasing,
/// categories increasing codes, at most 65536 bins per feature.
fn mapper_of(path: &Path, h: &Header, p: usize) -> Result<BinMapper> {
    let mut stored = crate::alloc::with_capacity(h.features.len(), "the bin mapper")?;
    let mut bins = crate::alloc::with_capacity(h.features.len(), "the bin mapper")?;
    for (j, fb) in &h.features {
        let j = usize::try_from(*j).unwrap_or(usize::MAX);
        if j >= p || stored.last().is_some_and(|&last| last >= j) {
            return Err(corrupt(path, "the features' bins are out of order"));
        }
        let increasing = fb.thresholds.windows(2).all(|w| w[0] < w[1]);
        if !increasing || fb.thresholds.iter().any(|t| !t.is_finite()) {
            return Err(corrupt(
                path,
                format!("feature {j}'s thresholds are not increasing"),
            ));
        }
        if fb.n_bins() > 1 << 16 {
            return Err(corrupt(path, format!("feature {j} has too many bins")));
        }
        if let Some(cats) = &fb.categories {
            let ok = cats.len() <= fb.n_value_bins()
                && cats.windows(2).all(|w| w[0] < w[1])
                && cats.iter().all(|&c| c as usize <= MAX_CATEGORY as usize);
            if !ok {
                return Err(corrupt(
                    path,
                    format!("feature {j}'s categories are not valid"),
                ));
            }
        }
        stored.push(j);
        bins.push(fb.clone());
    }
    let as_usize = |v: u64, what: &str| {
        usize::try_from(v)
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| corrupt(path, format!("{what} is not valid")))
    };
    Ok(BinMapper {
        features: FeatureTable::with_single_bins(p, &stored, bins)?,
        max_bins: as_usize(h.max_bins, "max_bins")?,
        min_data_in_bin: as_usize(h.min_data_in_bin, "min_data_in_bin")?,
    })
}

/// Every feature-major code below its feature's bin count.
fn check_codes(path: &Path, codes: &BinCodes, n: usize, mapper: &BinMapper) -> Result<()> {
    fn check<C: super::codes::BinCode>(c: &[C], n: usize, mapper: &BinMapper) -> Option<usize> {
        c.chunks_exact(n)
            .zip(&mapper.features)
            .position(|(col, fb)| col.iter().any(|v| v.idx() >= fb.n_bins()))
    }
    let bad = match codes {
        BinCodes::U8(c) => check(c, n, mapper),
        BinCodes::U16(c) => check(c, n, mapper),
    };
    match bad {
        Some(j) => Err(corrupt(
            path,
            format!("feature {j} has codes beyond its bins"),
        )),
        None => Ok(()),
    }
}

/// The sparse layout's features and histogram offsets, checked: each
/// feature has all its bins or none, its default bin among them.
fn sparse_layout(
    path: &Path,
    bin_offsets: &[u64],
    default_bins: &[Option<u64>],
    mapper: &BinMapper,
    p: usize,
) -> Result<(FeatureUse, Vec<usize>)> {
    if bin_offsets.len() != p + 1 || default_bins.len() != p || bin_offsets[0] != 0 {
        return Err(corrupt(
            path,
            "the sparse layout does not match the features",
        ));
    }
    let mut offsets = crate::alloc::with_capacity(p + 1, "the histogram offsets")?;
    let mut used = crate::alloc::with_capacity(p, "the histogram offsets")?;
    let mut defaults = crate::alloc::with_capacity(p, "the histogram offsets")?;
    offsets.push(0usize);
    for j in 0..p {
        let span = bin_offsets[j + 1].checked_sub(bin_offsets[j]);
        let n_bins = mapper.features[j].n_bins() as u64;
        if span != Some(0) && span != Some(n_bins) {
            return Err(corrupt(
                path,
                format!("feature {j}'s histogram offsets are not valid"),
            ));
        }
        let default = match default_bins[j] {
            Some(d) if span == Some(0) || d >= n_bins => {
                return Err(corrupt(
                    path,
                    format!("feature {j}'s default bin is not valid"),
                ));
            }
            d => d.map(|d| d as usize),
        };
        offsets.push(
            usize::try_from(bin_offsets[j + 1])
                .map_err(|_| corrupt(path, "the histogram offsets are too large"))?,
        );
        used.push(span != Some(0));
        defaults.push(default);
    }
    if *offsets.last().unwrap_or(&0) > u32::MAX as usize {
        return Err(corrupt(path, "the histogram offsets are too large"));
    }
    let features = FeatureUse {
        default_bins: defaults,
        used,
    };
    Ok((features, offsets))
}

/// The sparse rows' starts, checked: from 0 to the entries' count without
/// decreasing, each row's entries increasing and below `total_bins`.
fn check_sparse_rows(
    path: &Path,
    ptr: &[u64],
    bins: &[u32],
    total_bins: usize,
) -> Result<Vec<usize>> {
    if ptr.first() != Some(&0) || ptr.last() != Some(&(bins.len() as u64)) {
        return Err(corrupt(path, "the sparse rows' starts are not valid"));
    }
    let mut out = crate::alloc::with_capacity(ptr.len(), "the sparse row starts")?;
    for w in ptr.windows(2) {
        if w[1] < w[0] || w[1] > bins.len() as u64 {
            return Err(corrupt(path, "the sparse rows' starts decrease"));
        }
        let row = &bins[w[0] as usize..w[1] as usize];
        let sorted = row.windows(2).all(|b| b[0] < b[1]);
        if !sorted || row.last().is_some_and(|&b| b as usize >= total_bins) {
            return Err(corrupt(path, "a sparse row's entries are not valid"));
        }
    }
    out.extend(ptr.iter().map(|&v| v as usize));
    Ok(out)
}

#[cfg(test)]
mod tests;
