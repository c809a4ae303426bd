//! The crate's layering, as DESIGN.md declares it: a top-level module uses
//! only modules of lower layers (read from every `crate::` path outside
//! test code and comments), and no two files use each other (read from
//! every `crate::`, `super::`, `self::` and child-module path).
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Module -> layer (1 = lowest), from the list between DESIGN.md's markers.
fn declared_layers() -> BTreeMap<String, usize> {
    let design = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("DESIGN.md"))
        .expect("DESIGN.md is readable");
    let start = design
        .find("<!-- layers: start -->")
        .expect("layers start marker");
    let end = design
        .find("<!-- layers: end -->")
        .expect("layers end marker");
    let mut layers = BTreeMap::new();
    for line in design[start..end].lines().skip(1) {
        let Some((number, modules)) = line.split_once(". ") else {
            continue;
        };
        let layer: usize = number.trim().parse().expect("a numbered layer");
        for module in modules.split(',') {
            let name = module.trim().trim_matches('`').to_string();
            assert!(
                layers.insert(name.clone(), layer).is_none(),
                "{name} is listed twice"
            );
        }
    }
    layers
}

/// `code` without its comment lines and its `#[cfg(test)]` items: each
/// attribute up to the end of the item it marks, the first `;` or the
/// brace that closes its first `{` (braces balance in this crate's
/// strings and char literals, so counting them is enough).
fn without_tests(code: &str) -> String {
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut kept = String::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    kept.push_str(rest);
    kept
}

/// The top-level modules `code` names through `crate::` (a path or a
/// `use crate::{..}` group), outside `#[cfg(test)]` items and comments.
fn used_modules(code: &str) -> Vec<String> {
    let code = without_tests(code);
    let mut used = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c, d::{e, f}}`: the first name of each top-level item.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        used.push(ident(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            used.push(ident(rest));
        }
    }
    used
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_use_only_lower_layers() {
    let layers = declared_layers();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut seen = BTreeMap::new();
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel.iter().next().expect("a path").to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let Some(&layer) = layers.get(&module) else {
            panic!(
                "src/{} belongs to module `{module}`, which DESIGN.md's layers do not list",
                rel.display()
            );
        };
        seen.insert(module.clone(), ());
        let code = fs::read_to_string(&file).expect("a source file");
        for used in used_modules(&code) {
            if used == module {
                continue;
            }
            match layers.get(&used) {
                Some(&l) if l < layer => {}
                Some(&l) => wrong.push(format!(
                    "src/{} (layer {layer}) uses crate::{used} (layer {l})",
                    rel.display()
                )),
                None => wrong.push(format!(
                    "src/{} uses crate::{used}, which no layer lists",
                    rel.display()
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
    let unused: Vec<_> = layers.keys().filter(|m| !seen.contains_key(*m)).collect();
    assert!(
        unused.is_empty(),
        "DESIGN.md lists modules that do not exist: {unused:?}"
    );
}

#[test]
fn the_reader_finds_grouped_and_inline_paths() {
    let code = "use crate::{a::B, c, d::{e, f}};\nfn g() { crate::h::i(); }\n// crate::comment\n#[cfg(test)]\nuse crate::test_only;";
    assert_eq!(used_modules(code), ["a", "c", "d", "h"]);
}

#[test]
fn code_after_a_test_module_is_read() {
    let code = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::t;\n    fn f() { if x { crate::u::v(); } }\n}\nfn g() { crate::b::c(); }\n#[cfg(test)]\nfn h() { crate::w(); }\nuse crate::d;";
    assert_eq!(used_modules(code), ["a", "b", "d"]);
}

/// The first-column entries of DESIGN.md's module map (`error.rs`,
/// `data/`, `booster/fit.rs`, ...).
fn mapped_modules() -> Vec<String> {
    let design = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("DESIGN.md"))
        .expect("DESIGN.md is readable");
    let start = design.find("## Module map").expect("a module map");
    design[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(1))
        .map(|cell| cell.trim().trim_matches('`').to_string())
        .filter(|cell| cell.ends_with(".rs") || cell.ends_with('/'))
        .collect()
}

#[test]
fn the_module_map_lists_every_module_that_exists() {
    // Each top-level module is a row, or each file of its folder is
    // (`booster/` is mapped file by file); every row names a real path.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mapped = mapped_modules();
    let missing_paths: Vec<_> = mapped.iter().filter(|m| !src.join(m).exists()).collect();
    assert!(
        missing_paths.is_empty(),
        "DESIGN.md's module map names paths that do not exist: {missing_paths:?}"
    );
    let mut unmapped = Vec::new();
    for entry in fs::read_dir(&src).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .to_string();
        if name == "lib.rs" {
            continue;
        }
        if path.is_dir() {
            let folder = format!("{name}/");
            if mapped.contains(&folder) {
                continue;
            }
            let mut files = Vec::new();
            rust_files(&path, &mut files);
            for file in files {
                let rel = file.strip_prefix(&src).expect("under src");
                let rel = rel.to_string_lossy().to_string();
                if !rel.ends_with("/mod.rs") && !mapped.contains(&rel) {
                    unmapped.push(rel);
                }
            }
        } else if !mapped.contains(&name) {
            unmapped.push(name);
        }
    }
    assert!(
        unmapped.is_empty(),
        "DESIGN.md's module map does not list: {unmapped:?}"
    );
}

/// One path of a `use` tree or an inline path: its segments after
/// `crate::` (or relative ones, in a re-export), and the name it binds.
#[derive(Debug, PartialEq)]
struct UsePath {
    segments: Vec<String>,
    alias: Option<String>,
}

/// The paths of the use tree (or inline path) at the start of `s`:
/// `a::{b, c::{d as e, self}, *}` gives `a::b`, `a::c::d` (as `e`),
/// `a::c` and `a`. A glob or `self` names the module it ends in.
fn use_tree(s: &str, at: &mut usize) -> Vec<UsePath> {
    let bytes = s.as_bytes();
    let skip_space = |at: &mut usize| {
        while *at < bytes.len() && (bytes[*at] as char).is_whitespace() {
            *at += 1;
        }
    };
    skip_space(at);
    let whole = || {
        vec![UsePath {
            segments: Vec::new(),
            alias: None,
        }]
    };
    match bytes.get(*at) {
        Some(b'{') => {
            *at += 1;
            let mut paths = Vec::new();
            loop {
                skip_space(at);
                match bytes.get(*at) {
                    None => break,
                    Some(b'}') => {
                        *at += 1;
                        break;
                    }
                    Some(b',') => *at += 1,
                    Some(_) => {
                        let before = *at;
                        paths.extend(use_tree(s, at));
                        if *at == before {
                            // Not a use tree after all; stop rather than spin.
                            break;
                        }
                    }
                }
            }
            return paths;
        }
        Some(b'*') => {
            *at += 1;
            return whole();
        }
        _ => {}
    }
    let start = *at;
    while *at < bytes.len() && (bytes[*at].is_ascii_alphanumeric() || bytes[*at] == b'_') {
        *at += 1;
    }
    let ident = &s[start..*at];
    let more = s[*at..].starts_with("::");
    if ident.is_empty() || (ident == "self" && !more) {
        return whole();
    }
    if more {
        *at += 2;
        let mut paths = use_tree(s, at);
        for path in &mut paths {
            path.segments.insert(0, ident.to_string());
        }
        return paths;
    }
    let mut alias = None;
    let mut look = *at;
    while look < bytes.len() && (bytes[look] as char).is_whitespace() {
        look += 1;
    }
    if let Some(after) = s[look..].strip_prefix("as ") {
        let name: String = after
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        *at = s.len() - after.trim_start().len() + name.len();
        alias = Some(name);
    }
    vec![UsePath {
        segments: vec![ident.to_string()],
        alias,
    }]
}

/// The modules a file declares with `mod name;` (outside test code):
/// paths that start with one of them are relative to the file.
fn child_modules(code: &str) -> Vec<String> {
    let mut children = Vec::new();
    for line in code.lines() {
        let mut line = line.trim();
        if let Some(rest) = line.strip_prefix("pub") {
            line = match rest.strip_prefix('(') {
                Some(scoped) => scoped.split_once(')').map_or("", |(_, after)| after),
                None => rest,
            }
            .trim_start();
        }
        if let Some(name) = line.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
            children.push(name.trim().to_string());
        }
    }
    children
}

/// Whether the use tree at `at` is a `pub use` (any visibility but
/// private): a re-export, the module's interface rather than its use.
fn is_re_export(code: &str, at: usize) -> bool {
    let Some(head) = code[..at].trim_end().strip_suffix("use") else {
        return false;
    };
    let mut head = head.trim_end();
    if let Some(scoped) = head.strip_suffix(')') {
        match scoped.rfind('(') {
            Some(open) => head = scoped[..open].trim_end(),
            None => return false,
        }
    }
    head.strip_suffix("pub").is_some_and(|before| {
        !before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// A path a file names, made absolute (the segments after `crate::`),
/// and whether a `pub use` re-exports it.
#[derive(Debug, PartialEq)]
struct Named {
    path: Vec<String>,
    name: Option<String>,
    re_export: bool,
}

/// Every path the code of module `module` names, outside `#[cfg(test)]`
/// items and comments: `crate::..`, `super::..`, `self::..` and paths
/// through the modules it declares, with `use` groups expanded.
fn named_paths(code: &str, module: &[String]) -> Vec<Named> {
    let code = without_tests(code);
    let children = child_modules(&code);
    let mut roots: Vec<String> = ["crate", "super", "self"].map(String::from).to_vec();
    roots.extend(children);
    let mut starts: Vec<usize> = Vec::new();
    for root in &roots {
        let token = format!("{root}::");
        for (at, _) in code.match_indices(&token) {
            let before = code[..at].chars().next_back();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                starts.push(at);
            }
        }
    }
    starts.sort();
    let mut named = Vec::new();
    let mut read_to = 0;
    for at in starts {
        if at < read_to {
            // Inside a use tree already read (`use super::{gain::X}`).
            continue;
        }
        let mut end = at;
        let re_export = is_re_export(&code, at);
        for path in use_tree(&code, &mut end) {
            let mut segments = path.segments.into_iter().peekable();
            let mut base: Vec<String> = module.to_vec();
            match segments.peek().map(String::as_str) {
                Some("crate") => {
                    base.clear();
                    segments.next();
                }
                Some("self") => {
                    segments.next();
                }
                Some("super") => {
                    while segments.peek().is_some_and(|s| s == "super") {
                        base.pop();
                        segments.next();
                    }
                }
                _ => {}
            }
            base.extend(segments);
            named.push(Named {
                path: base,
                name: path.alias,
                re_export,
            });
        }
        read_to = end;
    }
    named
}

/// The module path (`["data", "matrix"]`) of a file under `src`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut segments: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if segments.last().is_some_and(|s| s == "mod" || s == "lib") {
        segments.pop();
    }
    segments
}

/// The file (under `src`) an absolute path leads to: the deepest module
/// file it names, through the `pub use` re-exports of the files on the
/// way (`crate::DenseMatrix` is `data/matrix.rs`'s).
fn file_of(src: &Path, segments: &[String], depth: usize) -> std::path::PathBuf {
    let mut file = std::path::PathBuf::from("lib.rs");
    let mut module = std::path::PathBuf::new();
    let mut taken = 0;
    for segment in segments {
        let dir = module.join(segment);
        let as_file = std::path::PathBuf::from(format!("{}.rs", dir.display()));
        let as_dir = dir.join("mod.rs");
        if src.join(&as_file).exists() {
            file = as_file;
        } else if src.join(&as_dir).exists() {
            file = as_dir;
        } else {
            break;
        }
        module = dir;
        taken += 1;
    }
    let rest = &segments[taken..];
    if rest.is_empty() || depth > 8 {
        return file;
    }
    let code = fs::read_to_string(src.join(&file)).expect("a source file");
    for export in named_paths(&code, &module_of(&file)) {
        let name = export.name.as_ref().or(export.path.last());
        if !export.re_export || name != Some(&rest[0]) {
            continue;
        }
        let mut target = export.path.clone();
        target.extend(rest[1..].iter().cloned());
        let next = file_of(src, &target, depth + 1);
        if next != file {
            return next;
        }
    }
    file
}

/// How often `word` occurs in `code` as a whole identifier.
fn occurrences(code: &str, word: &str) -> usize {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(word)
        .filter(|(at, _)| {
            !code[..*at].chars().next_back().is_some_and(is_ident)
                && !code[at + word.len()..].chars().next().is_some_and(is_ident)
        })
        .count()
}

/// Every file of `src` and the files its code uses, paths relative to
/// `src`. A re-export alone is the module's interface, not a use: it
/// counts only when the file's code also names what it re-exports.
fn file_imports(src: &Path) -> BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut imports = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src").to_path_buf();
        let code = fs::read_to_string(&file).expect("a source file");
        let kept = without_tests(&code);
        let mut used: Vec<String> = named_paths(&code, &module_of(&rel))
            .iter()
            .filter(|named| {
                !named.re_export
                    || named
                        .name
                        .as_ref()
                        .or(named.path.last())
                        .is_some_and(|name| occurrences(&kept, name) > 1)
            })
            .map(|named| file_of(src, &named.path, 0))
            .filter(|target| *target != rel)
            .map(|target| target.to_string_lossy().to_string())
            .collect();
        used.sort();
        used.dedup();
        imports.insert(rel.to_string_lossy().to_string(), used);
    }
    imports
}

/// The pairs of files that each use the other.
fn import_circles(imports: &BTreeMap<String, Vec<String>>) -> Vec<(String, String)> {
    let mut circles = Vec::new();
    for (a, used) in imports {
        for b in used {
            if a < b && imports.get(b).is_some_and(|back| back.contains(a)) {
                circles.push((a.clone(), b.clone()));
            }
        }
    }
    circles
}

/// Pairs of files that may use each other (in the order the check lists
/// them), each with one line on why the two are one concept that cannot
/// be split. None today: every pair found so far had a shared part that
/// moved below both.
const ALLOWED_CIRCLES: &[(&str, &str, &str)] = &[];

#[test]
fn the_only_import_circles_are_the_allowed_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let circles = import_circles(&file_imports(&src));
    let unexpected: Vec<String> = circles
        .iter()
        .filter(|(a, b)| !ALLOWED_CIRCLES.iter().any(|(x, y, _)| a == x && b == y))
        .map(|(a, b)| format!("src/{a} <-> src/{b}"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "files that import each other:\n{}",
        unexpected.join("\n")
    );
    let stale: Vec<_> = ALLOWED_CIRCLES
        .iter()
        .filter(|(x, y, _)| !circles.iter().any(|(a, b)| a == x && b == y))
        .collect();
    assert!(stale.is_empty(), "allowed circles that are gone: {stale:?}");
}

#[test]
fn the_path_reader_expands_groups_and_relative_paths() {
    let code = "mod e;\nuse crate::{a::B, c, d::{f as g, self, h::*}};\nuse super::super::i::J;\nfn k() { super::l::m::<T>(); e::n(); self::o(); x::e::p(); }\n// crate::comment\nmacro_rules! q { () => { $crate::r::s } }\npub use e::T;\npub(crate) use\n    self::u::V as W;\npub used: u8,";
    let module = ["top".to_string(), "here".to_string()];
    let read: Vec<(String, Option<String>, bool)> = named_paths(code, &module)
        .into_iter()
        .map(|n| (n.path.join("::"), n.name, n.re_export))
        .collect();
    let expected = [
        ("a::B", None, false),
        ("c", None, false),
        ("d::f", Some("g"), false),
        ("d", None, false),
        ("d::h", None, false),
        ("i::J", None, false),
        ("top::l::m", None, false),
        ("top::here::e::n", None, false),
        ("top::here::o", None, false),
        ("top::here::e::T", None, true),
        ("top::here::u::V", Some("W"), true),
    ]
    .map(|(p, n, r)| (p.to_string(), n.map(str::to_string), r));
    assert_eq!(read, expected);
    // A re-export the file's code also names is a use of it.
    assert_eq!(
        occurrences("pub use a::B;\nfn f(b: B, c: BB, d: a_B) {}", "B"),
        2
    );
}

#[test]
fn a_path_through_re_exports_leads_to_the_defining_file() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let path = |p: &str| -> Vec<String> { p.split("::").map(str::to_string).collect() };
    assert_eq!(
        file_of(&src, &path("error::RgbmError"), 0),
        Path::new("error.rs")
    );
    // lib.rs re-exports `data::DenseMatrix`, data/mod.rs `matrix::DenseMatrix`.
    assert_eq!(
        file_of(&src, &path("DenseMatrix"), 0),
        Path::new("data/matrix.rs")
    );
    assert_eq!(file_of(&src, &path("data"), 0), Path::new("data/mod.rs"));
}
