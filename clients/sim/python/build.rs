//! Embeds BUILD_ID: the md5 of the Rust sources and manifests, in the order the Makefile's stamp
//! and tests/test_sim_native.py hash them, so a stale extension is caught.

use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

fn sources(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") || name == "Cargo.toml" || name == "Cargo.lock" {
                out.push(path);
            }
        }
    }
    out.sort_by_key(|p| p.strip_prefix(root).unwrap_or(p).to_string_lossy().into_owned());
    out
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    let mut hash = Sha256::new();
    for path in sources(&root) {
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        hash.update(rel.as_bytes());
        hash.update(b"\0");
        hash.update(fs::read(&path).unwrap_or_default());
        hash.update(b"\0");
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let digest: String = hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=HEARTS_SIM_BUILD_ID={digest}");
    println!("cargo:rerun-if-changed={}", root.display());
}
