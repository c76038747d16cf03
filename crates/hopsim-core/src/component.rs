//! The one contract of every registered component (topology kind, routing algorithm, VC
//! policy, traffic pattern, workload, motif, allocation policy): an entry with its name, one
//! line on it and its key type's keys and defaults (`Component`), registered with one line in
//! its family's `registry!`, its keys declared once with `keys!` (docs/adding-a-component.md).

use crate::spec::Key;

/// What `hopsim list`, the docs check and the key readers know of a registered component.
/// `registry!` implements it for its family's entry type, whose fields of the same names
/// every family has.
pub trait Component: 'static {
    /// The name an experiment file writes (`topology.kind = "torus"`).
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    /// The keys it reads besides those of its whole family (its key type's `KEYS`).
    fn keys(&self) -> &'static [Key];
    /// Its key type's values when nothing is given, `null` for those without a value of
    /// their own (`KeyType::defaults`).
    fn defaults(&self) -> serde_json::Value;
}

/// A component's key type, declared with `keys!`: the keys' names, defaults and meanings come
/// from the one declaration that also makes the type serde reads them into.
pub trait KeyType: serde::de::DeserializeOwned + serde::Serialize {
    const KEYS: &'static [Key];
    fn defaults() -> serde_json::Value;
}

/// A key's default written as a literal in `keys!` (`= 3`, `= "palmtree"`) as the key
/// type's value: the literal itself, or a `String` from a string literal.
pub trait FromLiteral<L> {
    fn from_literal(l: L) -> Self;
}

impl<T> FromLiteral<T> for T {
    fn from_literal(l: T) -> T {
        l
    }
}

impl FromLiteral<&'static str> for String {
    fn from_literal(l: &'static str) -> String {
        l.to_string()
    }
}

/// One list per component family. `registry! { enum Algorithm; const ALGORITHMS: [AlgorithmKind] = { Dor => dor::KIND, ... } }`
/// makes the closed enum (the names the deadlock-freedom table and the engine match on) and
/// the registry slice from the same lines, in the same order, so a component is one line.
/// The entries' type has the fields of `Component` (`name`, `about`, `keys`, `defaults`),
/// which it implements.
macro_rules! registry {
    ($(#[$m:meta])* enum $Enum:ident; $(#[$cm:meta])* const $REG:ident: [$Kind:ty] = { $($v:ident => $entry:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $Enum {
            $($v),*
        }

        impl $Enum {
            /// Every variant, in the registry's order.
            pub const ALL: &'static [$Enum] = &[$($Enum::$v),*];

            /// Its registry entry.
            pub fn kind(self) -> &'static $Kind {
                &$REG[self as usize]
            }

            pub fn name(self) -> &'static str {
                self.kind().name
            }

            pub fn from_name(name: &str) -> Option<Self> {
                $REG.iter().position(|k| k.name == name).map(|i| Self::ALL[i])
            }
        }

        impl $crate::component::Component for $Kind {
            fn name(&self) -> &'static str {
                self.name
            }
            fn about(&self) -> &'static str {
                self.about
            }
            fn keys(&self) -> &'static [$crate::spec::Key] {
                self.keys
            }
            fn defaults(&self) -> serde_json::Value {
                (self.defaults)()
            }
        }

        $(#[$cm])*
        pub const $REG: &[$Kind] = &[$($entry),*];
    };
}

/// A component's key type and its `Key` list from one declaration: each field's doc comment
/// is its meaning, and `= ...` its default as an experiment file writes it:
///
/// - `q: u64 = required`: an error naming the key when not given;
/// - `ghost: u64 = 1`, `mode: String = "adaptive"`: a literal, written as is;
/// - `groups: Option<usize> = "a*h+1" => None`: the default's text (words when it depends on
///   other keys, `null` then in `defaults`), then its value.
///
/// The type reads a table of its keys alone (unknown ones are refused; a null is a key not
/// given) and implements `KeyType`. Exported, so that a test may declare a fixture kind's.
#[macro_export]
macro_rules! keys {
    (
        $(#[$meta:meta])*
        $vis:vis struct $Name:ident {
            $(
                $(#[doc = $doc:literal])*
                $fvis:vis $field:ident : $ty:ty = $d:tt $(=> $value:expr)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        $vis struct $Name {
            $(
                $(#[doc = $doc])*
                $fvis $field: $ty,
            )*
        }

        impl<'de> serde::Deserialize<'de> for $Name {
            #[allow(unused_variables)]
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Given {
                    $(
                        #[serde(default)]
                        $field: Option<$ty>,
                    )*
                }
                let given = Given::deserialize(d)?;
                Ok($Name {
                    $(
                        $field: match given.$field {
                            Some(v) => v,
                            None => match $crate::keys!(@value $ty; $d $(=> $value)?) {
                                Some(v) => v,
                                None => return Err(<D::Error as serde::de::Error>::missing_field(stringify!($field))),
                            },
                        },
                    )*
                })
            }
        }

        // Inherent too, so that registry entries name them without the trait.
        #[allow(dead_code)]
        impl $Name {
            pub(crate) const KEYS: &'static [$crate::spec::Key] = <Self as $crate::component::KeyType>::KEYS;
            pub(crate) fn defaults() -> serde_json::Value {
                <Self as $crate::component::KeyType>::defaults()
            }
        }

        impl $crate::component::KeyType for $Name {
            const KEYS: &'static [$crate::spec::Key] = &[
                $(
                    $crate::spec::Key { name: stringify!($field), default: $crate::keys!(@text $d $(=> $value)?), meaning: concat!($($doc),*) },
                )*
            ];
            fn defaults() -> serde_json::Value {
                #[allow(unused_mut)]
                let mut out = serde_json::Map::new();
                $(
                    let v: Option<$ty> = $crate::keys!(@value $ty; $d $(=> $value)?);
                    out.insert(stringify!($field).to_string(), v.map_or(serde_json::Value::Null, |v| serde_json::to_value(v).expect("keys serialise")));
                )*
                serde_json::Value::Object(out)
            }
        }
    };
    (@text required) => { "required" };
    (@text $text:literal => $value:expr) => { $text };
    (@text $lit:literal) => { stringify!($lit) };
    (@value $ty:ty; required) => { None::<$ty> };
    (@value $ty:ty; $text:literal => $value:expr) => { Some::<$ty>($value) };
    (@value $ty:ty; $lit:literal) => { Some(<$ty as $crate::component::FromLiteral<_>>::from_literal($lit)) };
}

keys! {
    /// The key type of a component that reads no keys of its own.
    pub struct NoKeys {}
}
