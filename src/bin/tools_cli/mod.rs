//! The development tools' command lines (cuzk-fixture, cuzk-bench, cuzk-gpu), shared by
//! `#[path]`: each subcommand declares its options, lexopt reads argv, and anything else —
//! an unknown option, a missing or malformed value, a stray argument — exits 2 with the
//! problem and the usage. `--help` prints every subcommand with its options.
//! (Not a binary: cargo only takes `src/bin/*.rs` and `src/bin/*/main.rs` as binaries.)
#![allow(dead_code)] // each tool uses part of it

use std::collections::HashMap;

/// What an option takes.
#[derive(Clone, Copy)]
pub enum Kind {
    /// No value.
    Flag,
    /// An unsigned number.
    Num,
    /// Comma-separated unsigned numbers.
    Nums,
    /// A decimal fraction (0.51).
    Real,
    /// Any text (a path, a proof name, a mode); the subcommand checks its meaning.
    Text,
}

#[derive(Clone, Copy)]
pub struct Opt {
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
}

pub const fn flag(name: &'static str, help: &'static str) -> Opt {
    Opt { name, kind: Kind::Flag, help }
}
pub const fn num(name: &'static str, help: &'static str) -> Opt {
    Opt { name, kind: Kind::Num, help }
}
pub const fn nums(name: &'static str, help: &'static str) -> Opt {
    Opt { name, kind: Kind::Nums, help }
}
pub const fn real(name: &'static str, help: &'static str) -> Opt {
    Opt { name, kind: Kind::Real, help }
}
pub const fn text(name: &'static str, help: &'static str) -> Opt {
    Opt { name, kind: Kind::Text, help }
}

pub struct Sub {
    /// "" for the tool's mode without a subcommand name.
    pub name: &'static str,
    pub help: &'static str,
    pub opts: &'static [Opt],
    /// Positional arguments it takes (their usage text), or None.
    pub positional: Option<&'static str>,
}

/// A subcommand without positional arguments.
pub const fn sub(name: &'static str, help: &'static str, opts: &'static [Opt]) -> Sub {
    Sub { name, help, opts, positional: None }
}

/// A command line that passed the checks.
pub struct Parsed {
    pub sub: &'static str,
    /// None for a flag.
    values: HashMap<&'static str, Option<String>>,
    pub positional: Vec<String>,
}

impl Parsed {
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The text of option `name` (`--name`), if given.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(|v| v.as_deref())
    }

    /// Option `name` as a number, else `default`. The text was checked at parse time; a number
    /// too large for `T` ends the program with status 2.
    pub fn num<T: std::str::FromStr>(&self, name: &str, default: T) -> T {
        self.text(name).map_or(default, |v| parse_or_exit(name, v))
    }

    /// Option `name` as a list of numbers (`default` when absent), each as [`Self::num`].
    pub fn nums<T: std::str::FromStr>(&self, name: &str, default: &str) -> Vec<T> {
        self.text(name).unwrap_or(default).split(',').map(|x| parse_or_exit(name, x)).collect()
    }
}

fn parse_or_exit<T: std::str::FromStr>(name: &str, v: &str) -> T {
    v.parse().unwrap_or_else(|_| {
        eprintln!("--{name} {v:?}: out of range");
        std::process::exit(2)
    })
}

pub fn usage(tool: &str, subs: &[Sub]) -> String {
    let mut u = format!("usage: {tool} SUBCOMMAND [OPTIONS]\n");
    for s in subs {
        let name = if s.name.is_empty() { format!("{tool} [OPTIONS]") } else { format!("{tool} {}", s.name) };
        u += &format!("\n  {name}{}\n      {}\n", s.positional.map(|p| format!(" {p}")).unwrap_or_default(), s.help);
        for o in s.opts {
            let v = match o.kind {
                Kind::Flag => "",
                Kind::Num => " N",
                Kind::Nums => " N,N..",
                Kind::Real => " X",
                Kind::Text => " TEXT",
            };
            u += &format!("      {:<24} {}\n", format!("--{}{v}", o.name), o.help);
        }
    }
    u
}

/// Parse argv against `subs`; exits 0 after `--help`, 2 on any problem.
pub fn parse(tool: &str, subs: &'static [Sub]) -> Parsed {
    match try_parse(subs, std::env::args_os().skip(1)) {
        Ok(Some(p)) => p,
        Ok(None) => {
            println!("{}", usage(tool, subs));
            std::process::exit(0);
        }
        Err(problem) => {
            eprintln!("{tool}: {problem}\n{}", usage(tool, subs));
            std::process::exit(2);
        }
    }
}

/// An argument, owned (lexopt's borrow the parser).
enum Arg {
    Help,
    Long(String),
    Value(std::ffi::OsString),
    Unexpected(String),
}

fn next(p: &mut lexopt::Parser) -> Result<Option<Arg>, String> {
    use lexopt::prelude::*;
    Ok(p.next().map_err(|e| e.to_string())?.map(|a| match a {
        Short('h') | Long("help") => Arg::Help,
        Long(name) => Arg::Long(name.to_string()),
        Value(v) => Arg::Value(v),
        other => Arg::Unexpected(other.unexpected().to_string()),
    }))
}

/// Ok(None): help was asked for.
pub fn try_parse(subs: &'static [Sub], args: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Option<Parsed>, String> {
    let mut p = lexopt::Parser::from_args(args);
    let named = |n: &str| subs.iter().find(|s| !s.name.is_empty() && s.name == n);
    let implicit = subs.iter().find(|s| s.name.is_empty());
    let mut first = next(&mut p)?;
    let sub = match &first {
        Some(Arg::Value(v)) => match v.to_str().and_then(named) {
            Some(s) => {
                first = next(&mut p)?;
                s
            }
            None => implicit.ok_or_else(|| format!("unknown subcommand {:?}", v.to_string_lossy()))?,
        },
        Some(Arg::Help) => return Ok(None),
        Some(_) | None => implicit.ok_or("no subcommand given")?,
    };
    let mut parsed = Parsed { sub: sub.name, values: HashMap::new(), positional: Vec::new() };
    let mut arg = first;
    while let Some(a) = arg {
        match a {
            Arg::Help => return Ok(None),
            Arg::Long(name) => {
                let opt = sub.opts.iter().find(|o| o.name == name).ok_or_else(|| format!("{}: unknown option --{name}", label(sub)))?;
                let value = match opt.kind {
                    Kind::Flag => None,
                    kind => {
                        let v = p.value().map_err(|e| e.to_string())?.into_string().map_err(|v| format!("--{name} {v:?}: not UTF-8"))?;
                        let bad = |what: &str| format!("--{name} {v:?}: not {what}");
                        match kind {
                            Kind::Num if v.parse::<u64>().is_err() => return Err(bad("a number")),
                            Kind::Nums if v.split(',').any(|x| x.parse::<u64>().is_err()) => return Err(bad("a list of numbers")),
                            Kind::Real if !v.parse::<f64>().is_ok_and(f64::is_finite) => return Err(bad("a number")),
                            _ => {}
                        }
                        Some(v)
                    }
                };
                parsed.values.insert(opt.name, value);
            }
            Arg::Value(v) if sub.positional.is_some() => parsed.positional.push(v.into_string().map_err(|v| format!("{v:?}: not UTF-8"))?),
            Arg::Value(v) => return Err(format!("{}: unexpected argument {:?}", label(sub), v.to_string_lossy())),
            Arg::Unexpected(why) => return Err(format!("{}: {why}", label(sub))),
        }
        arg = next(&mut p)?;
    }
    Ok(Some(parsed))
}

fn label(s: &Sub) -> String {
    if s.name.is_empty() { "options".into() } else { s.name.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SUBS: &[Sub] = &[
        Sub { name: "", help: "default", opts: &[flag("only", "x")], positional: Some("PROOF...") },
        Sub { name: "run", help: "run", opts: &[num("runs", "n"), nums("log", "l"), text("proof", "p")], positional: None },
    ];

    fn parse(args: &[&str]) -> Result<Option<Parsed>, String> {
        try_parse(SUBS, args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn declared_options_parse_and_everything_else_is_refused() {
        let p = parse(&["run", "--runs", "5", "--log", "20,24", "--proof=8"]).unwrap().unwrap();
        assert_eq!((p.sub, p.num("runs", 0u32), p.nums::<u32>("log", ""), p.text("proof")), ("run", 5, vec![20, 24], Some("8")));
        let p = parse(&["--only", "a", "b"]).unwrap().unwrap();
        assert_eq!((p.sub, p.has("only"), p.positional.clone()), ("", true, vec!["a".to_string(), "b".to_string()]));
        for (args, want) in [
            (&["run", "--runs", "x"][..], "not a number"),
            (&["run", "--runs"], "missing argument"),
            (&["run", "--log", "20,x"], "not a list of numbers"),
            (&["run", "--runz", "5"], "unknown option --runz"),
            (&["run", "stray"], "unexpected argument"),
            (&["run", "-q"], "invalid option"),
        ] {
            let e = parse(args).err().unwrap_or_else(|| panic!("{args:?} accepted"));
            assert!(e.contains(want), "{args:?}: {e}");
        }
        assert!(parse(&["run", "--help"]).unwrap().is_none());
        assert!(usage("t", SUBS).contains("--runs N"));
    }
}
