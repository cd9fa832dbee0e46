//! Opening a workload file: gzip-compressed or not (by its first bytes),
//! SWF or JSON lines (by its name).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
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

/// A file's bytes, decompressed when it is gzip-compressed (by its first
/// bytes). The decompressed size the gzip trailer gives (modulo 4 GiB, of
/// the last member) is reserved up front, within a bound: a file that
/// lies about it only costs a reallocation.
fn read_all(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    let mut magic = [0u8; 2];
    let gz = file.read(&mut magic)? == 2 && magic == [0x1f, 0x8b];
    file.seek(SeekFrom::Start(0))?;
    if !gz {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    let len = file.metadata()?.len();
    let mut size = [0u8; 4];
    let hint = if len >= 18 {
        file.seek(SeekFrom::End(-4))?;
        file.read_exact(&mut size)?;
        file.seek(SeekFrom::Start(0))?;
        u64::from(u32::from_le_bytes(size)).min(len.saturating_mul(64))
    } else {
        0
    };
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
    flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, file)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

pub fn read_workload(path: &Path, opts: &ReadOptions) -> Result<Workload, InputError> {
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let io = |source| InputError::Io { path: path.display().to_string(), source };
    if name.ends_with(".swf") {
        Ok(crate::swf::parse(&read_all(path).map_err(io)?, opts.swf_queues))
    } else if name.ends_with(".jsonl") || name.ends_with(".json") {
        let bytes = read_all(path).map_err(io)?;
        let text = String::from_utf8(bytes)
            .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error())))?;
        Ok(crate::jsonl::read(&text))
    } else {
        Err(InputError::UnknownFormat { path: path.display().to_string() })
    }
}
