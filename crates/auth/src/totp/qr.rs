//! The `otpauth://` URI of a TOTP secret and its QR code as a PNG data URL.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use data_encoding::BASE32_NOPAD;
use qrcode::{Color, QrCode};

use super::{DIGITS, STEP_SECS, TotpError};

/// Light modules around the code, on each side (the QR specification's minimum).
const QUIET_ZONE: usize = 4;

/// Pixels per module, each way.
const SCALE: usize = 6;

/// Grey level of dark and light pixels.
const DARK: u8 = 0x00;
const LIGHT: u8 = 0xff;

/// The key URI authenticator apps scan:
/// `otpauth://totp/<issuer>:<account>?secret=<BASE32>&issuer=<issuer>&algorithm=SHA1&digits=6&period=30`,
/// with the issuer and account percent-encoded.
pub(super) fn otpauth_uri(issuer: &str, account: &str, secret: &[u8]) -> String {
    let issuer = percent_encode(issuer);
    format!(
        "otpauth://totp/{issuer}:{account}?secret={secret}&issuer={issuer}\
         &algorithm=SHA1&digits={DIGITS}&period={STEP_SECS}",
        account = percent_encode(account),
        secret = BASE32_NOPAD.encode(secret),
    )
}

/// `text` percent-encoded: every byte but the RFC 3986 unreserved characters and `@`
/// (legal in both a path segment and a query) becomes `%XX`.
fn percent_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'@') {
            encoded.push(char::from(byte));
        } else {
            // Writing to a `String` cannot fail.
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

/// `text` as a QR code in a `data:image/png;base64,` URL: 8-bit greyscale, black on
/// white, [`SCALE`] pixels per module, with a [`QUIET_ZONE`]-module margin.
pub(super) fn png_data_url(text: &str) -> Result<String, TotpError> {
    let code = QrCode::new(text.as_bytes()).map_err(|_| TotpError::QrCode)?;
    let png = render_png(&code)?;
    Ok(format!("data:image/png;base64,{}", STANDARD.encode(png)))
}

/// The PNG bytes of `code`.
fn render_png(code: &QrCode) -> Result<Vec<u8>, TotpError> {
    let modules = code.width();
    let colors = code.to_colors();
    let side_modules = modules + 2 * QUIET_ZONE;
    let side = side_modules * SCALE;

    let mut pixels = Vec::with_capacity(side * side);
    for y in 0..side_modules {
        let row: Vec<u8> = (0..side_modules)
            .flat_map(|x| {
                let dark = module_index(x, y, modules)
                    .and_then(|index| colors.get(index))
                    .is_some_and(|color| *color == Color::Dark);
                std::iter::repeat_n(if dark { DARK } else { LIGHT }, SCALE)
            })
            .collect();
        for _ in 0..SCALE {
            pixels.extend_from_slice(&row);
        }
    }

    let side = u32::try_from(side).map_err(|_| TotpError::QrCode)?;
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, side, side);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|_| TotpError::QrCode)?;
    writer
        .write_image_data(&pixels)
        .map_err(|_| TotpError::QrCode)?;
    writer.finish().map_err(|_| TotpError::QrCode)?;
    Ok(png)
}

/// The index in the module list of the module at `(x, y)` of the bordered image, or
/// `None` in the quiet zone.
fn module_index(x: usize, y: usize, modules: usize) -> Option<usize> {
    let x = x.checked_sub(QUIET_ZONE).filter(|x| *x < modules)?;
    let y = y.checked_sub(QUIET_ZONE).filter(|y| *y < modules)?;
    Some(y * modules + x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_follows_the_key_uri_format() {
        let uri = otpauth_uri("Muster", "ada@example.com", b"12345678901234567890");
        assert_eq!(
            uri,
            "otpauth://totp/Muster:ada@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\
             &issuer=Muster&algorithm=SHA1&digits=6&period=30"
        );
    }

    #[test]
    fn label_and_issuer_are_percent_encoded() {
        let uri = otpauth_uri("Muster Dev", "a+b:c/d?e&f#g%h@x.y", b"k");
        assert!(
            uri.starts_with("otpauth://totp/Muster%20Dev:a%2Bb%3Ac%2Fd%3Fe%26f%23g%25h@x.y?"),
            "{uri}"
        );
        assert!(uri.contains("&issuer=Muster%20Dev&"), "{uri}");
        assert_eq!(percent_encode("é~"), "%C3%A9~");
    }

    #[test]
    fn quiet_zone_is_outside_the_modules() {
        assert_eq!(module_index(0, 10, 21), None);
        assert_eq!(module_index(3, 4, 21), None);
        assert_eq!(module_index(4, 4, 21), Some(0));
        assert_eq!(module_index(24, 24, 21), Some(21 * 21 - 1));
        assert_eq!(module_index(25, 4, 21), None);
        assert_eq!(module_index(4, 25, 21), None);
    }
}
