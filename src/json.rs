//! JSON text of models and logs without aborting on allocation failure, and
//! with cancellation: the writer grows its buffer fallibly and polls a
//! `Cancel` as it goes; readers of lists a file sizes (`fallible_vec`) grow
//! them fallibly too, and poll the `Cancel` of the current load per element.
use std::cell::{Cell, RefCell};
use std::fmt;
use std::io;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};

use crate::cancel::Cancel;
use crate::error::{Result, RgbmError};

/// Bytes written between two polls of the cancellation flag.
const POLL_BYTES: usize = 1 << 20;

/// A `Vec<u8>` sink whose growth fails with an io error instead of aborting.
struct FallibleBuffer<'a> {
    buf: Vec<u8>,
    /// Most bytes the text may take (as if the allocator had no more).
    cap: usize,
    cancel: &'a Cancel,
    unpolled: usize,
    failure: Option<RgbmError>,
}

impl io::Write for FallibleBuffer<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data).map(|()| data.len())
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        if self.buf.len().saturating_add(data.len()) > self.cap
            || self.buf.try_reserve(data.len()).is_err()
        {
            // Freed first: the message and serde's error need memory too.
            let len = std::mem::take(&mut self.buf).len();
            self.failure = Some(RgbmError::OutOfMemory(format!(
                "cannot grow the JSON text past {len} bytes"
            )));
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        self.buf.extend_from_slice(data);
        self.unpolled += data.len();
        if self.unpolled >= POLL_BYTES {
            self.unpolled = 0;
            if self.cancel.is_set() {
                self.failure = Some(RgbmError::Interrupted);
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `value` as compact JSON text: `OutOfMemory` if the text does not fit,
/// `Interrupted` once `cancel` is set (polled every MiB written).
pub fn to_string<T: Serialize + ?Sized>(value: &T, cancel: &Cancel) -> Result<String> {
    to_string_capped(value, cancel, usize::MAX)
}

fn to_string_capped<T: Serialize + ?Sized>(
    value: &T,
    cancel: &Cancel,
    cap: usize,
) -> Result<String> {
    let mut sink = FallibleBuffer {
        buf: Vec::new(),
        cap,
        cancel,
        unpolled: 0,
        failure: None,
    };
    match serde_json::to_writer(&mut sink, value) {
        Ok(()) => {}
        Err(e) => {
            return Err(sink
                .failure
                .take()
                .unwrap_or_else(|| RgbmError::ModelFormat(e.to_string())));
        }
    }
    // serde_json writes valid UTF-8 only.
    String::from_utf8(sink.buf).map_err(|e| RgbmError::ModelFormat(e.to_string()))
}

/// The members of a JSON object, in order, values as their text.
struct Members<'a>(Vec<(String, &'a serde_json::value::RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Splits the JSON object `text` into the text of its member `key` (the
/// last one if repeated, as most readers take) and the text of the object
/// without that member, the other members in order. The value is checked as
/// JSON but not parsed, so a large member costs one scan. `ModelFormat` if
/// `text` is not one JSON object.
pub fn split_member<'a>(text: &'a str, key: &str) -> Result<(Option<&'a str>, String)> {
    let Members(members) =
        serde_json::from_str(text).map_err(|e| RgbmError::ModelFormat(e.to_string()))?;
    let mut found = None;
    let mut rest = String::from("{");
    for (name, value) in members {
        if name == key {
            found = Some(value.get());
            continue;
        }
        if rest.len() > 1 {
            rest.push(',');
        }
        rest.push_str(
            &serde_json::to_string(&name).map_err(|e| RgbmError::ModelFormat(e.to_string()))?,
        );
        rest.push(':');
        rest.push_str(value.get());
    }
    rest.push('}');
    Ok((found, rest))
}

thread_local! {
    /// The cancellation of the load running on this thread (none outside one).
    static LOAD_CANCEL: RefCell<Cancel> = RefCell::new(Cancel::never());
    /// Why the load running on this thread stopped, when it was not the text.
    static LOAD_FAILURE: Cell<Option<Failure>> = const { Cell::new(None) };
    /// Memory set aside while a load runs, freed when a list cannot grow so
    /// that reporting the failure (serde's error, its path) can allocate.
    static LOAD_RESERVE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Bytes set aside by `reading` for reporting an allocation failure.
const RESERVE_BYTES: usize = 1 << 20;

#[derive(Clone, Copy, Debug)]
enum Failure {
    OutOfMemory(usize),
    Interrupted,
}

/// Runs a deserialisation with `cancel` polled by `fallible_vec`; maps the
/// serde error it fails with to `OutOfMemory` / `Interrupted` when that is
/// why it stopped, else to `describe(error)` as `ModelFormat`.
pub fn reading<T, E>(
    cancel: &Cancel,
    run: impl FnOnce() -> std::result::Result<T, E>,
    describe: impl FnOnce(&E) -> String,
) -> Result<T> {
    let mut reserve = Vec::new();
    if reserve.try_reserve_exact(RESERVE_BYTES).is_err() {
        return Err(RgbmError::OutOfMemory(
            "cannot start reading the model".into(),
        ));
    }
    let previous_reserve = LOAD_RESERVE.with(|r| r.replace(reserve));
    let previous = LOAD_CANCEL.with(|c| c.replace(cancel.clone()));
    let previous_failure = LOAD_FAILURE.with(|f| f.take());
    let out = run();
    LOAD_CANCEL.with(|c| c.replace(previous));
    LOAD_RESERVE.with(|r| r.replace(previous_reserve));
    let failure = LOAD_FAILURE.with(|f| f.replace(previous_failure));
    out.map_err(|e| match failure {
        Some(Failure::OutOfMemory(n)) => {
            RgbmError::OutOfMemory(format!("cannot grow a list of the model past {n} elements"))
        }
        Some(Failure::Interrupted) => RgbmError::Interrupted,
        None => RgbmError::ModelFormat(describe(&e)),
    })
}

/// A list deserialised with fallible growth (and a cancellation poll per
/// element): `#[serde(deserialize_with = "crate::json::fallible_vec")]`.
pub fn fallible_vec<'de, D, T>(d: D) -> std::result::Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_seq(FallibleVec(PhantomData))
}

/// `fallible_vec` for a list of lists.
pub fn fallible_vec_vec<'de, D, T>(d: D) -> std::result::Result<Vec<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_seq(FallibleVec::<Inner<T>>(PhantomData))
        .map(|v| v.into_iter().map(|Inner(x)| x).collect())
}

#[repr(transparent)]
struct Inner<T>(Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Inner<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        fallible_vec(d).map(Inner)
    }
}

struct FallibleVec<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for FallibleVec<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Vec<T>, A::Error> {
        use serde::de::Error;
        let mut out: Vec<T> = Vec::new();
        let fail = |f: Failure, msg: &str| {
            LOAD_FAILURE.with(|c| c.set(Some(f)));
            A::Error::custom(msg)
        };
        loop {
            if LOAD_CANCEL.with(|c| c.borrow().is_set()) {
                return Err(fail(Failure::Interrupted, "interrupted"));
            }
            let Some(item) = seq.next_element()? else {
                return Ok(out);
            };
            if out.try_reserve(1).is_err() {
                let len = out.len();
                drop(out);
                LOAD_RESERVE.with(|r| drop(r.take()));
                return Err(fail(Failure::OutOfMemory(len), "out of memory"));
            }
            out.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    #[derive(Debug, PartialEq, serde::Deserialize, serde::Serialize)]
    struct Doc {
        #[serde(deserialize_with = "fallible_vec")]
        a: Vec<u32>,
        #[serde(deserialize_with = "fallible_vec_vec")]
        b: Vec<Vec<f64>>,
    }

    fn parse(text: &str, cancel: &Cancel) -> Result<Doc> {
        reading(
            cancel,
            || serde_json::from_str::<Doc>(text),
            |e| e.to_string(),
        )
    }

    #[test]
    fn lists_read_as_serde_reads_them() {
        let doc = parse(r#"{"a": [1, 2, 3], "b": [[], [0.5]]}"#, &Cancel::never()).unwrap();
        assert_eq!(
            doc,
            Doc {
                a: vec![1, 2, 3],
                b: vec![vec![], vec![0.5]]
            }
        );
        let err = parse(r#"{"a": [1, -2], "b": []}"#, &Cancel::never()).unwrap_err();
        assert!(
            matches!(err, RgbmError::ModelFormat(ref m) if m.contains("-2")),
            "{err}"
        );
        let text = to_string(&doc, &Cancel::never()).unwrap();
        assert_eq!(text, serde_json::to_string(&doc).unwrap());
    }

    #[test]
    fn a_set_flag_stops_reading_and_writing() {
        let flag = Arc::new(AtomicBool::new(true));
        let cancel = Cancel::on(flag);
        let err = parse(r#"{"a": [1], "b": []}"#, &cancel).unwrap_err();
        assert_eq!(err, RgbmError::Interrupted);
        // The flag is only the current load's: the next one reads.
        assert!(parse(r#"{"a": [1], "b": []}"#, &Cancel::never()).is_ok());
        let big = Doc {
            a: vec![7; 1 << 20],
            b: vec![],
        };
        assert_eq!(to_string(&big, &cancel), Err(RgbmError::Interrupted));
        assert_eq!(
            to_string(&big, &Cancel::never()).unwrap().len(),
            2 * (1 << 20) + 14
        );
    }

    #[test]
    fn a_member_splits_off_and_the_rest_keeps_its_order() {
        let text = r#" {"b": [1, {"x": 2}], "model": {"t": [0.5]}, "a": "m\"odel", "model": 7} "#;
        let (model, rest) = split_member(text, "model").unwrap();
        assert_eq!(model, Some("7"));
        assert_eq!(rest, r#"{"b":[1, {"x": 2}],"a":"m\"odel"}"#);
        let (none, rest) = split_member(r#"{"a": 1}"#, "model").unwrap();
        assert_eq!((none, rest.as_str()), (None, r#"{"a":1}"#));
        assert_eq!(
            split_member("{}", "model").unwrap(),
            (None, "{}".to_string())
        );
        // Numbers are not parsed: 1e999 reaches the reader of the rest.
        assert!(split_member(r#"{"a": 1e999}"#, "model").is_ok());
        for bad in ["[1]", r#"{"a": NaN}"#, r#"{"a": 1} x"#, ""] {
            assert!(
                matches!(split_member(bad, "model"), Err(RgbmError::ModelFormat(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_text_that_does_not_fit_is_out_of_memory() {
        let doc = Doc {
            a: vec![7; 1000],
            b: vec![],
        };
        let err = to_string_capped(&doc, &Cancel::never(), 100).unwrap_err();
        assert!(
            matches!(err, RgbmError::OutOfMemory(ref m) if m.contains("JSON text")),
            "{err}"
        );
        let len = serde_json::to_string(&doc).unwrap().len();
        assert!(to_string_capped(&doc, &Cancel::never(), len - 1).is_err());
        assert_eq!(
            to_string_capped(&doc, &Cancel::never(), len).unwrap().len(),
            len
        );
    }
}
