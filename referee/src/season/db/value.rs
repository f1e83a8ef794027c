//! Parameters and rows of the season's data layer (`sql.rs`): what both
//! engines store alike — integers (booleans as 0/1), doubles, text, NULL.

use anyhow::Context;

/// A parameter, or a column of a row.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// The parameters of a statement, as `rusqlite::params!` takes them:
/// `args![a, b]` for `$1` and `$2`.
macro_rules! args {
    ($($v:expr),* $(,)?) => {
        &[$($crate::season::db::value::Value::from($v)),*][..]
    };
}
pub(crate) use args;

/// A row: its columns in the order the statement names them.
#[derive(Clone, Debug, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    /// Column `i` (from 0) as a `T`.
    pub fn get<T: Get>(&self, i: usize) -> anyhow::Result<T> {
        let v = self
            .0
            .get(i)
            .with_context(|| format!("a row has no column {i}"))?;
        T::get(v).with_context(|| format!("column {i} of a row"))
    }
}

/// What a column can be read as.
pub trait Get: Sized {
    fn get(v: &Value) -> anyhow::Result<Self>;
}

fn unexpected<T>(v: &Value, wanted: &str) -> anyhow::Result<T> {
    anyhow::bail!("expected {wanted}, found {v:?}")
}

impl Get for i64 {
    fn get(v: &Value) -> anyhow::Result<Self> {
        match v {
            Value::Int(i) => Ok(*i),
            _ => unexpected(v, "an integer"),
        }
    }
}

impl Get for u32 {
    fn get(v: &Value) -> anyhow::Result<Self> {
        Ok(u32::try_from(i64::get(v)?)?)
    }
}

impl Get for bool {
    fn get(v: &Value) -> anyhow::Result<Self> {
        Ok(i64::get(v)? != 0)
    }
}

impl Get for f64 {
    fn get(v: &Value) -> anyhow::Result<Self> {
        match v {
            Value::Real(f) => Ok(*f),
            Value::Int(i) => Ok(*i as f64),
            _ => unexpected(v, "a number"),
        }
    }
}

impl Get for String {
    fn get(v: &Value) -> anyhow::Result<Self> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            _ => unexpected(v, "text"),
        }
    }
}

impl<T: Get> Get for Option<T> {
    fn get(v: &Value) -> anyhow::Result<Self> {
        match v {
            Value::Null => Ok(None),
            _ => T::get(v).map(Some),
        }
    }
}
