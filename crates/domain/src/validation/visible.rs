//! What text may be shown honestly: a name or a title must show something, and must not
//! hold the controls that reorder how the text around them is displayed (a "Trojan
//! Source" title reads differently from what it holds). Identifiers (e-mails) are also
//! brought to one form (NFKC), so that two addresses that look alike are one.

use unicode_normalization::UnicodeNormalization;

use crate::ValidationError;

/// The bidirectional embedding, override and isolate controls (U+202A to U+202E,
/// U+2066 to U+2069): they reorder the display of the text that follows them.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Unicode's default-ignorable code points (DerivedCoreProperties.txt): characters that
/// show nothing where they are not understood — zero-width spaces and joiners, the word
/// joiner, the byte-order mark, Hangul fillers, variation selectors, tags, the soft
/// hyphen, and the bidirectional controls among them.
pub(crate) fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Whether `c` leaves nothing to see: white space, a control character, a
/// default-ignorable code point, or the Braille blank (which fonts draw empty).
pub(crate) fn is_invisible(c: char) -> bool {
    c.is_whitespace() || c.is_control() || is_default_ignorable(c) || c == '\u{2800}'
}

/// Refuses a name or title that cannot be displayed honestly: one holding a
/// bidirectional control, or one with nothing visible in it.
///
/// ```text
/// "Pay \u{202E}gnp.exe"  -> "title must not contain bidirectional control characters …"
/// "\u{200B}\u{200B}"     -> "title must contain a visible character"
/// ```
pub(crate) fn displayable(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.chars().any(is_bidi_control) {
        return Err(ValidationError::new(format!(
            "{field} must not contain bidirectional control characters \
             (U+202A to U+202E, U+2066 to U+2069)"
        )));
    }
    if value.chars().all(is_invisible) {
        return Err(ValidationError::new(format!(
            "{field} must contain a visible character"
        )));
    }
    Ok(())
}

/// `value` without the characters that hide or reorder text (bidirectional controls and
/// the other default-ignorable code points), for text from elsewhere that is kept rather
/// than refused (an issue's title, an Agent Card's name).
pub(crate) fn without_hidden(value: &str) -> String {
    value
        .chars()
        .filter(|c| !is_default_ignorable(*c))
        .collect()
}

/// The compatibility composition (NFKC) of `value`: full-width and other compatibility
/// forms become their plain letters ("ｂｏｂ" is "bob").
pub(crate) fn nfkc(value: &str) -> String {
    value.nfkc().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidirectional_controls_are_refused_wherever_they_are() {
        for control in ['\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}'] {
            let err = displayable("title", &format!("Invoice {control}fdp.exe")).unwrap_err();
            assert!(err.message().contains("bidirectional"), "{control:?}");
        }
        for isolate in ['\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}'] {
            assert!(displayable("name", &format!("a{isolate}b")).is_err());
        }
        // The marks (LRM, RLM) reorder nothing by themselves: right-to-left text needs them.
        assert!(displayable("title", "שלום\u{200F} world").is_ok());
    }

    #[test]
    fn text_with_nothing_visible_is_refused() {
        for blank in [
            "\u{200B}",
            "\u{200B}\u{200C}\u{200D}\u{2060}",
            "\u{FEFF}",
            "\u{3164}\u{3164}",
            "\u{2800}",
            "\u{00AD} \u{034F}",
            "\u{E0041}\u{E0042}",
        ] {
            assert_eq!(
                displayable("title", blank).unwrap_err().message(),
                "title must contain a visible character",
                "{blank:?}"
            );
        }
        for shown in ["a", "Ship\u{200D}it", "🚀", "日本語", "x\u{FE0F}"] {
            assert!(displayable("title", shown).is_ok(), "{shown:?}");
        }
    }

    #[test]
    fn hidden_characters_are_taken_out_of_kept_text() {
        assert_eq!(without_hidden("Fix \u{202E}bug\u{202C}\u{200B}"), "Fix bug");
        assert_eq!(without_hidden("plain"), "plain");
    }

    #[test]
    fn nfkc_folds_full_width_and_compatibility_forms() {
        assert_eq!(nfkc("ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ"), "bob@example.com");
        assert_eq!(nfkc("ﬁle"), "file");
        assert_eq!(nfkc("café"), "café");
    }
}
