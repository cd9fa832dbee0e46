//! Opening a workload file: gzip-compressed or not (by its first bytes),
//! SWF or JSON lines (by its name).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::workload::Workload;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: expected a workload named *.swf[.gz] (Standard Workload Format) or *.jsonl[.gz] (JSON lines)")]
    UnknownFormat { path: String },
}

/// Options of the workload readers.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Which SWF field names a job's queue.
    pub swf_queues: crate::swf::QueueField,
}

/// Whether a workload file is JSON lines (which carry no machine).
pub fn is_json_lines(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.ends_with(".jsonl") || name.ends_with(".json")
}

fn open(path: &Path) -> std::io::Result<Box<dyn BufRead>> {
    let mut file = BufReader::new(File::open(path)?);
    let gz = file.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    Ok(if gz {
        Box::new(BufReader::with_capacity(1 << 16, flate2::read::MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    })
}

pub fn read_workload(path: &Path, opts: &ReadOptions) -> Result<Workload, InputError> {
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let io = |source| InputError::Io { path: path.display().to_string(), source };
    if name.ends_with(".swf") {
        crate::swf::read(open(path).map_err(io)?, opts.swf_queues).map_err(io)
    } else if name.ends_with(".jsonl") || name.ends_with(".json") {
        let mut text = String::new();
        open(path).map_err(io)?.read_to_string(&mut text).map_err(io)?;
        Ok(crate::jsonl::read(&text))
    } else {
        Err(InputError::UnknownFormat { path: path.display().to_string() })
    }
}
