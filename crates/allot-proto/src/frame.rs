//! Length-prefixed frames: a 4-byte big-endian length, then the bytes.

use std::io::{Read, Write};

/// The largest request allotd accepts: 16 MiB.
pub const MAX_FRAME: usize = 16 << 20;

/// The largest answer a command accepts: 1 GiB (`bjobs -u all -a` on a
/// busy cluster is large; allotd, not a stranger, is the sender).
pub const MAX_RESPONSE: usize = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("frame of {0} bytes is larger than allowed")]
    TooLarge(usize),
    #[error("malformed message: {0}")]
    Json(#[from] serde_json::Error),
}

/// Writes one request frame (at most [`MAX_FRAME`] bytes).
pub fn write_frame(w: &mut impl Write, bytes: &[u8]) -> Result<(), FrameError> {
    if bytes.len() > MAX_FRAME {
        return Err(FrameError::TooLarge(bytes.len()));
    }
    let len = u32::try_from(bytes.len()).map_err(|_| FrameError::TooLarge(bytes.len()))?;
    w.write_all(&len.to_be_bytes())?;
    w.write_all(bytes)?;
    w.flush()?;
    Ok(())
}

/// Reads one frame; a length over [`MAX_FRAME`] is refused before reading.
pub fn read_frame(r: &mut impl Read) -> Result<Vec<u8>, FrameError> {
    read_frame_up_to(r, MAX_FRAME)
}

/// Reads one frame of at most `max` bytes; a longer one is refused before
/// reading.
pub fn read_frame_up_to(r: &mut impl Read, max: usize) -> Result<Vec<u8>, FrameError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > max {
        return Err(FrameError::TooLarge(len));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip_and_limits() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"{\"a\":1}").expect("write");
        assert_eq!(&buf[..4], &[0, 0, 0, 7]);
        assert_eq!(read_frame(&mut buf.as_slice()).expect("read"), b"{\"a\":1}");
        let huge = (MAX_FRAME as u32 + 1).to_be_bytes();
        assert!(matches!(read_frame(&mut huge.as_slice()), Err(FrameError::TooLarge(_))));
        assert!(matches!(read_frame(&mut [0u8, 0, 0, 9, 1].as_slice()), Err(FrameError::Io(_))), "truncated");
        let mut big = huge.to_vec();
        big.extend(std::iter::repeat_n(b'x', MAX_FRAME + 1));
        assert_eq!(
            read_frame_up_to(&mut big.as_slice(), MAX_RESPONSE).expect("an answer may be larger").len(),
            MAX_FRAME + 1
        );
    }

    proptest! {
        #[test]
        fn any_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = read_frame(&mut bytes.as_slice());
        }
    }
}
