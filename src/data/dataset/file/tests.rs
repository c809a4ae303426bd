use super::*;
use crate::data::DenseMatrix;

/// Rows of `p` features: numbers with missing values, a categorical
/// column (codes 0..5) and, with `sparse`, mostly zeros.
fn rows(n: usize, p: usize, sparse: bool) -> Vec<f64> {
    let mut x = vec![0.0; n * p];
    for i in 0..n {
        for j in 0..p {
            let k = (i * 7919 + j * 104_729) % 1009;
            x[i * p + j] = if sparse && k % 10 != 0 {
                0.0
            } else if j == 1 {
                (k % 5) as f64
            } else if k % 13 == 0 {
                f64::NAN
            } else {
                k as f64 / 7.0
            };
        }
    }
    x
}

fn binned(n: usize, p: usize, sparse: bool, max_bins: usize) -> BinnedDataset {
    let x = rows(n, p, sparse);
    let m = DenseMatrix::row_major(&x, n, p).unwrap();
    let w: Vec<f64> = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
    BinnedDataset::from_weighted_matrix(&m, max_bins, 3, Some(&w), &[1], 5, &Cancel::never())
        .unwrap()
}

fn extras(n: usize) -> Extras {
    Extras {
        arrays: vec![
            (
                "label".into(),
                Extra::F64((0..n).map(|i| i as f64 * 0.25 - 3.0).collect()),
            ),
            ("group".into(), Extra::I64(vec![i64::MAX, -1, 7])),
        ],
        meta: r#"{"any": ["json", 1]}"#.into(),
    }
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rgbm-binned-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("data.bin")
}

fn saved(d: &BinnedDataset, e: &Extras, name: &str) -> (PathBuf, Vec<u8>) {
    let path = temp(name);
    d.save(&path, e, &Cancel::never()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

fn load_bytes(bytes: &[u8], name: &str) -> Result<(BinnedDataset, Extras)> {
    let path = temp(name);
    std::fs::write(&path, bytes).unwrap();
    BinnedDataset::load(&path, &Cancel::never())
}

/// The file with its header changed by `edit` and the checksum made right again.
fn rewritten(bytes: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[16..16 + len]).unwrap();
    edit(&mut header);
    let text = serde_json::to_vec(&header).unwrap();
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(&text);
    out.extend_from_slice(&bytes[16 + len..bytes.len() - 8]);
    let mut sum = Checksum::new();
    sum.update(&out);
    out.extend_from_slice(&sum.0.to_le_bytes());
    out
}

fn assert_same(a: &BinnedDataset, b: &BinnedDataset) {
    // Debug shows every field: both code layouts, offsets, default bins,
    // sparse rows and their column index.
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

#[test]
fn a_dense_dataset_comes_back_as_it_was() {
    let d = binned(300, 4, false, 16);
    assert!(d.codes.is_some() && d.sparse_rows.is_none());
    let e = extras(300);
    let (path, _) = saved(&d, &e, "dense");
    let (back, extras_back) = BinnedDataset::load(&path, &Cancel::never()).unwrap();
    assert_same(&d, &back);
    assert_eq!(extras_back, e);
    assert!(back.mapper.features[1].is_categorical());
}

#[test]
fn sparse_rows_and_wide_codes_come_back_as_they_were() {
    let d = binned(2000, 6, true, 16);
    assert!(d.sparse_rows.is_some(), "mostly zeros keeps sparse rows");
    let (path, _) = saved(&d, &Extras::default(), "sparse");
    assert_same(&d, &BinnedDataset::load(&path, &Cancel::never()).unwrap().0);

    let d = binned(3000, 3, false, 1000);
    assert!(matches!(d.codes, Some(BinCodes::U16(_))));
    let (path, _) = saved(&d, &Extras::default(), "u16");
    assert_same(&d, &BinnedDataset::load(&path, &Cancel::never()).unwrap().0);

    // A subset (codes gathered, layouts found anew) too.
    let s = d.subset(&[5, 3, 2999, 0], &Cancel::never()).unwrap();
    let (path, _) = saved(&s, &Extras::default(), "subset");
    assert_same(&s, &BinnedDataset::load(&path, &Cancel::never()).unwrap().0);
}

fn refused(bytes: &[u8], name: &str, says: &str) {
    match load_bytes(bytes, name) {
        Err(RgbmError::ModelFormat(m)) => assert!(m.contains(says), "{m:?} does not say {says:?}"),
        Err(e) => panic!("expected a format error saying {says:?}, got {e:?}"),
        Ok(_) => panic!("a damaged file was loaded ({says})"),
    }
}

#[test]
fn damaged_files_are_refused() {
    let d = binned(300, 4, false, 16);
    let (_, bytes) = saved(&d, &extras(300), "damaged");
    refused(b"", "empty", "truncated");
    refused(&bytes[..bytes.len() - 1], "cut1", "truncated");
    for cut in [4, 12, 20, 200, bytes.len() / 2, bytes.len() - 9] {
        assert!(load_bytes(&bytes[..cut], "cut").is_err(), "cut at {cut}");
    }
    let mut other = bytes.clone();
    other[0] = b'X';
    refused(&other, "magic", "tag");
    let mut flipped = bytes.clone();
    let k = bytes.len() - 100;
    flipped[k] ^= 0x10;
    refused(&flipped, "flip", "checksum");
    let v = rewritten(&bytes, |h| h["package_version"] = "0.0.1".into());
    refused(&v, "version", "written by rgbm_rs 0.0.1");
    let v = rewritten(&bytes, |h| h["format_version"] = 99.into());
    refused(&v, "format", "format 99");
    let v = rewritten(&bytes, |h| h["format"] = "something else".into());
    refused(&v, "fmt", "another format");
    // Claims of sizes the file does not hold: refused before any allocation.
    let v = rewritten(&bytes, |h| h["n_rows"] = (1u64 << 40).into());
    refused(&v, "rows", "values");
    let v = rewritten(&bytes, |h| h["blocks"][0]["len"] = (1u64 << 40).into());
    refused(&v, "len", "truncated or damaged");
    let v = rewritten(&bytes, |h| h["blocks"][0]["len"] = u64::MAX.into());
    refused(&v, "huge", "too large");
    // Thresholds that do not increase.
    let v = rewritten(&bytes, |h| {
        let t = &mut h["features"][0][1]["thresholds"];
        t[1] = t[0].clone();
    });
    refused(&v, "thresholds", "increasing");
}

#[test]
fn codes_beyond_the_bins_are_refused() {
    let d = binned(300, 4, false, 16);
    let (_, bytes) = saved(&d, &Extras::default(), "codes");
    let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
    let mut bad = bytes.clone();
    bad[16 + len] = 250; // row 0 of feature 0
    let n = bad.len() - 8;
    let mut sum = Checksum::new();
    sum.update(&bad[..n]);
    bad[n..].copy_from_slice(&sum.0.to_le_bytes());
    refused(&bad, "code", "codes beyond its bins");
}

#[test]
fn a_bad_sparse_layout_is_refused() {
    let d = binned(2000, 6, true, 16);
    let (_, bytes) = saved(&d, &Extras::default(), "sparse-bad");
    let v = rewritten(&bytes, |h| {
        h["layout"]["bin_offsets"][1] = 1.into();
    });
    refused(&v, "offsets", "offsets");
    let v = rewritten(&bytes, |h| {
        h["layout"]["default_bins"][0] = 999.into();
    });
    refused(&v, "default", "default bin");
}

#[test]
fn saving_replaces_the_file_whole() {
    let d = binned(300, 4, false, 16);
    let path = temp("replace");
    std::fs::write(&path, b"old").unwrap();
    d.save(&path, &Extras::default(), &Cancel::never()).unwrap();
    assert!(BinnedDataset::load(&path, &Cancel::never()).is_ok());
    // No temporary file is left next to it.
    let dir = path.parent().unwrap();
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("data.bin")]);
    // A folder that does not exist: an I/O error, nothing written.
    let missing = dir.join("no/such/dir/x.bin");
    assert!(matches!(
        d.save(&missing, &Extras::default(), &Cancel::never()),
        Err(RgbmError::Io(_))
    ));
}
