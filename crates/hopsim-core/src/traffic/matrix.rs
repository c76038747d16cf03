//! Traffic from a file: a matrix of destination weights per source (`traffic.matrix`), one
//! row per server and one column per server, as CSV or as NumPy's `.npy`. Row i gives how
//! often server i sends to each server: a packet's destination is drawn in proportion to its
//! row (Walker's alias method, `rand_distr::WeightedAliasIndex`, so a draw costs the same
//! whatever the row's length). Rows are distributions, not rates: every active server
//! injects at `traffic.load`, so a measured matrix's row sums do not set who sends more.

use super::{PatternCtx, TrafficPattern};
use crate::error::{SpecError, SpecResult};
use crate::routing::Rng;
use rand_distr::{Distribution, WeightedAliasIndex};
use std::path::Path;

keys! {
    struct Keys {
        /// the file of destination weights per source: .csv or .npy, servers x servers, diagonal 0
        matrix: Option<String> = "required" => None,
    }
}

const KEY: &str = "traffic.matrix";

/// One server's destinations with a weight above zero, and the alias table drawing among them.
struct Row {
    destinations: Vec<u32>,
    draw: WeightedAliasIndex<f64>,
}

pub struct Matrix {
    /// Per server; `None` for a row of zeros (a server that must not be active).
    rows: Vec<Option<Row>>,
}

impl TrafficPattern for Matrix {
    fn name(&self) -> &'static str {
        "matrix"
    }
    fn destination(&self, src: usize, rng: &mut Rng) -> usize {
        let row = self.rows[src].as_ref().expect("built only with a row for every active server");
        row.destinations[row.draw.sample(rng)] as usize
    }
}

impl Matrix {
    fn new(ctx: &PatternCtx) -> SpecResult<Self> {
        let Keys { matrix } = super::own_keys(ctx.spec)?;
        let Some(file) = matrix else {
            return Err(SpecError::new(KEY, "missing", "pattern = \"matrix\" needs the file of destination weights per source (.csv or .npy)"));
        };
        let n = ctx.servers.num_servers();
        let rows = read(&file, n)?;
        let at = |what: String| SpecError::new(KEY, format!("{file:?}"), what);
        if let Some(s) = ctx.active.iter().find(|&s| rows[s as usize].is_none()) {
            return Err(at(format!("row {} (server {s}) has no destination, but server {s} sends; give it one, or leave it out with traffic.active_servers", s + 1)));
        }
        Ok(Matrix { rows })
    }
}

/// The rows of `file`, checked against a network of `n` servers.
fn read(file: &str, n: usize) -> SpecResult<Vec<Option<Row>>> {
    let path = Path::new(file);
    let at = |what: String| SpecError::new(KEY, format!("{file:?}"), what);
    let reader = std::fs::File::open(path).map_err(|e| at(format!("cannot read it: {e}")))?;
    let mut rows = Vec::with_capacity(n);
    let mut add = |line: usize, values: &mut dyn Iterator<Item = Result<f64, String>>| -> SpecResult<()> {
        let src = rows.len();
        if src == n {
            return Err(at(format!("{}: more rows than the network's {n} servers (one row per source server)", place(path, line))));
        }
        let (mut destinations, mut weights) = (Vec::new(), Vec::new());
        let mut columns = 0;
        for (dst, w) in values.enumerate() {
            let w = w.map_err(|e| at(format!("{}, column {}: {e}", place(path, line), dst + 1)))?;
            if !w.is_finite() || w < 0.0 {
                return Err(at(format!("{}, column {}: weight {w}; weights are finite and 0 or more", place(path, line), dst + 1)));
            }
            if w > 0.0 && dst == src {
                return Err(at(format!("{}, column {}: weight {w} from server {src} to itself; the diagonal must be 0", place(path, line), dst + 1)));
            }
            if w > 0.0 && dst < n {
                destinations.push(dst as u32);
                weights.push(w);
            }
            columns += 1;
        }
        if columns != n {
            return Err(at(format!("{}: {columns} columns, the network has {n} servers (one column per destination server)", place(path, line))));
        }
        let row = if weights.is_empty() {
            None
        } else {
            let draw = WeightedAliasIndex::new(weights).map_err(|e| at(format!("{}: {e}", place(path, line))))?;
            Some(Row { destinations, draw })
        };
        rows.push(row);
        Ok(())
    };
    match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => read_npy(reader, &at, &mut add)?,
        Some("csv") | Some("txt") => read_csv(reader, &at, &mut add)?,
        _ => return Err(at("a matrix file ends in .csv (comma-separated rows) or .npy (NumPy)".into())),
    }
    if rows.len() != n {
        return Err(at(format!("{} rows, the network has {n} servers (one row per source server)", rows.len())));
    }
    Ok(rows)
}

/// "line L" of a CSV file, "row R" of a `.npy` array (`line` counts from 1 either way).
fn place(path: &Path, line: usize) -> String {
    if path.extension().is_some_and(|e| e == "npy") {
        format!("row {line}")
    } else {
        format!("line {line}")
    }
}

type AddRow<'a> = dyn FnMut(usize, &mut dyn Iterator<Item = Result<f64, String>>) -> SpecResult<()> + 'a;

/// Comma-separated rows of numbers; blank lines and lines starting with `#` are skipped.
fn read_csv(reader: std::fs::File, at: &dyn Fn(String) -> SpecError, add: &mut AddRow) -> SpecResult<()> {
    let mut csv = csv::ReaderBuilder::new().has_headers(false).comment(Some(b'#')).trim(csv::Trim::All).flexible(true).from_reader(reader);
    for record in csv.records() {
        let record = record.map_err(|e| at(format!("not CSV: {e}")))?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let mut values = record.iter().map(|v| v.parse::<f64>().map_err(|_| format!("{v:?} is not a number")));
        add(line, &mut values)?;
    }
    Ok(())
}

/// A two-dimensional `.npy` array of numbers, C or Fortran order.
fn read_npy(reader: std::fs::File, at: &dyn Fn(String) -> SpecError, add: &mut AddRow) -> SpecResult<()> {
    use npyz::{DType, TypeChar};
    let npy = npyz::NpyFile::new(std::io::BufReader::new(reader)).map_err(|e| at(format!("not a NumPy .npy file: {e}")))?;
    let shape = npy.shape().to_vec();
    let [rows, cols] = shape[..] else {
        return Err(at(format!("an array of shape {shape:?}; a matrix has two dimensions, sources x destinations")));
    };
    let (rows, cols) = (rows as usize, cols as usize);
    let fortran = npy.order() == npyz::Order::Fortran;
    let DType::Plain(ts) = npy.dtype() else {
        return Err(at("a structured array; a matrix holds plain numbers".into()));
    };
    let bad = |e: std::io::Error| at(format!("cannot read its numbers: {e}"));
    let values: Vec<f64> = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 8) => npy.into_vec::<f64>().map_err(bad)?,
        (TypeChar::Float, 4) => npy.into_vec::<f32>().map_err(bad)?.into_iter().map(f64::from).collect(),
        (TypeChar::Int, 8) => npy.into_vec::<i64>().map_err(bad)?.into_iter().map(|v| v as f64).collect(),
        (TypeChar::Int, 4) => npy.into_vec::<i32>().map_err(bad)?.into_iter().map(f64::from).collect(),
        (TypeChar::Uint, 8) => npy.into_vec::<u64>().map_err(bad)?.into_iter().map(|v| v as f64).collect(),
        (TypeChar::Uint, 4) => npy.into_vec::<u32>().map_err(bad)?.into_iter().map(f64::from).collect(),
        _ => return Err(at(format!("numbers of type {ts}; use floats (f4, f8) or integers (i4, i8, u4, u8)"))),
    };
    for r in 0..rows {
        let mut row = (0..cols).map(|c| Ok(values[if fortran { c * rows + r } else { r * cols + c }]));
        add(r + 1, &mut row)?;
    }
    Ok(())
}

pub const KIND: super::PatternKind = super::PatternKind {
    name: "matrix",
    about: "destinations drawn from a file of weights per source (CSV or .npy, one row and one column per server)",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    build: |cx| Ok(std::sync::Arc::new(Matrix::new(cx)?)),
    // A row per server (its header; its weights are the file's).
    tables: super::Tables { per_server: 24, per_switch: 0 },
};

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn write(name: &str, text: &str) -> String {
        let dir = std::env::temp_dir().join(format!("hopsim-matrix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    }

    #[test]
    fn draws_follow_the_row_weights() {
        let f = write("w.csv", "# weights\n0, 1, 3\n1, 0, 0\n\n2, 2, 0\n");
        let m = Matrix { rows: read(&f, 3).unwrap() };
        let mut rng = Rng::seed_from_u64(7);
        let mut counts = [[0u32; 3]; 3];
        for src in 0..3 {
            for _ in 0..40_000 {
                counts[src][m.destination(src, &mut rng)] += 1;
            }
        }
        assert_eq!(counts[0][0] + counts[1][1] + counts[1][2] + counts[2][2], 0);
        let share = counts[0][2] as f64 / 40_000.0;
        assert!((share - 0.75).abs() < 0.01, "{share}");
        let share = counts[2][0] as f64 / 40_000.0;
        assert!((share - 0.5).abs() < 0.01, "{share}");
    }

    #[test]
    fn bad_files_name_the_file_the_line_and_what_is_allowed() {
        let cases = [
            ("short.csv", "0,1,1\n1,0,1\n", "2 rows, the network has 3 servers"),
            ("cols.csv", "0,1,1\n1,0\n1,1,0\n", "line 2: 2 columns, the network has 3 servers"),
            ("nan.csv", "0,1,1\n1,0,x\n1,1,0\n", "line 2, column 3: \"x\" is not a number"),
            ("neg.csv", "0,1,1\n1,0,-2\n1,1,0\n", "line 2, column 3: weight -2; weights are finite and 0 or more"),
            ("diag.csv", "0,1,1\n1,5,1\n1,1,0\n", "line 2, column 2: weight 5 from server 1 to itself"),
            ("long.csv", "0,1,1\n1,0,1\n1,1,0\n1,1,1\n", "line 4: more rows than the network's 3 servers"),
            ("m.tsv", "0\t1\n", "ends in .csv"),
        ];
        for (name, text, want) in cases {
            let f = write(name, text);
            let e = read(&f, 3).err().unwrap_or_else(|| panic!("{name} accepted")).to_string();
            assert!(e.starts_with(&format!("traffic.matrix = {f:?}")) && e.contains(want), "{name}: {e}");
        }
        let e = read("/nonexistent/m.csv", 3).err().unwrap().to_string();
        assert!(e.contains("cannot read it"), "{e}");
    }
}
