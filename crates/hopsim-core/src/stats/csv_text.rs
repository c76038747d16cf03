//! Numbers as text the way the Python layer's tables write them (pandas `to_csv`, which
//! writes a float as Python's `repr` and a missing value as nothing), so that a table the
//! engine writes itself (engine/rows.rs, on MPI ranks) is byte for byte the file the Python
//! layer writes from the same result.

use std::fmt::Write;

/// `x` as Python's `repr(x)` writes it: the shortest digits that read back as `x`, in
/// positional notation with at least one decimal (`1.0`, `0.0001`) for decimal exponents
/// from -4 to 15, else in scientific notation with a signed exponent of at least two digits
/// (`1e-05`, `1.5e+16`); `inf`, `-inf`; NaN as nothing (pandas' missing value).
pub fn push_float(out: &mut String, x: f64) {
    if x.is_nan() {
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "inf" } else { "-inf" });
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde<exp>" or "de<exp>".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}`'s exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
    } else if exp < 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
        out.push_str(&digits);
    } else {
        let whole = exp as usize + 1;
        if digits.len() <= whole {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', whole - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..whole]);
            out.push('.');
            out.push_str(&digits[whole..]);
        }
    }
}

/// An integer column's value.
pub fn push_int(out: &mut String, x: impl std::fmt::Display) {
    let _ = write!(out, "{x}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(x: f64) -> String {
        let mut s = String::new();
        push_float(&mut s, x);
        s
    }

    #[test]
    fn floats_read_as_python_writes_them() {
        // Each beside `repr` of the same float in CPython (and numpy's `astype(str)`).
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (0.000123, "0.000123"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (2.5e-7, "2.5e-07"),
            (1.0 / 3.0, "0.3333333333333333"),
            (1234.5, "1234.5"),
            (1e-300, "1e-300"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-2.75, "-2.75"),
            (12.0, "12.0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, ""),
        ];
        for (x, want) in cases {
            assert_eq!(repr(x), want, "{x:e}");
        }
    }

    #[test]
    fn every_float_read_back_is_the_float_written() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state);
            if x.is_finite() {
                assert_eq!(repr(x).parse::<f64>().unwrap().to_bits(), x.to_bits(), "{x:e}");
            }
        }
    }
}
