//! Rules on what tools read and edit, and where `web_fetch` goes (Claude
//! Code's `Read(path)`, `Edit(path)`, `WebFetch(domain:host)`): paths as
//! absolute glob patterns (a folder's pattern covers what is beneath it),
//! hosts by name. Invariants: a deny rule wins over an ask rule, which
//! wins over an allow rule; a denied or asked host covers its subdomains,
//! an allowed one only itself; a path is matched as the call names it
//! and, when it exists, as the links lead, so a link to a denied file is
//! denied too.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Which list a rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Allow,
    Deny,
    Ask,
}

/// One rule: as written (`Read(./.env)`, shown to the user and the
/// model), and what it matches (an absolute glob pattern, or a host).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pattern {
    pub rule: String,
    pub pattern: String,
}

/// A kind of access's rules.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lists {
    #[serde(default)]
    allow: Vec<Pattern>,
    #[serde(default)]
    deny: Vec<Pattern>,
    #[serde(default)]
    ask: Vec<Pattern>,
}

/// What the rules say about one access: the rule that decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Says<'a> {
    Deny(&'a str),
    Ask(&'a str),
    Allow(&'a str),
    Nothing,
}

impl Lists {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty() && self.ask.is_empty()
    }

    /// Adds `other`'s rules (each once).
    pub fn extend(&mut self, other: Lists) {
        for (kind, pattern) in other.all() {
            let list = match kind {
                Kind::Allow => &self.allow,
                Kind::Deny => &self.deny,
                Kind::Ask => &self.ask,
            };
            if !list.contains(pattern) {
                self.add(kind, pattern.clone());
            }
        }
    }

    pub fn add(&mut self, kind: Kind, pattern: Pattern) {
        match kind {
            Kind::Allow => self.allow.push(pattern),
            Kind::Deny => self.deny.push(pattern),
            Kind::Ask => self.ask.push(pattern),
        }
    }

    /// The rules of every kind, with their kind.
    pub fn all(&self) -> impl Iterator<Item = (Kind, &Pattern)> {
        let with = |kind: Kind| move |p| (kind, p);
        self.deny
            .iter()
            .map(with(Kind::Deny))
            .chain(self.ask.iter().map(with(Kind::Ask)))
            .chain(self.allow.iter().map(with(Kind::Allow)))
    }

    /// What the rules say about the file `path` (absolute), as named and
    /// as its links lead.
    pub fn says_path(&self, path: &Path) -> Says<'_> {
        let compiled = self.compile();
        match (compiled.says(path), std::fs::canonicalize(path)) {
            (Says::Nothing, Ok(real)) => compiled.says(&real),
            (says, _) => says,
        }
    }

    /// The path rules compiled once, for many paths (a walk).
    pub fn compile(&self) -> Compiled<'_> {
        fn build(p: &Pattern) -> Option<(globset::GlobMatcher, &str)> {
            globset::GlobBuilder::new(&p.pattern)
                .literal_separator(true)
                .build()
                .ok()
                .map(|g| (g.compile_matcher(), p.rule.as_str()))
        }
        Compiled {
            deny: self.deny.iter().filter_map(build).collect(),
            ask: self.ask.iter().filter_map(build).collect(),
            allow: self.allow.iter().filter_map(build).collect(),
        }
    }

    /// What the rules say about fetching from `host`.
    pub fn says_host(&self, host: &str) -> Says<'_> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let within = |p: &Pattern| host_matches(&p.pattern, &host, true);
        let exactly = |p: &Pattern| host_matches(&p.pattern, &host, false);
        self.decide(within, within, exactly)
    }

    fn decide(
        &self,
        deny: impl Fn(&Pattern) -> bool,
        ask: impl Fn(&Pattern) -> bool,
        allow: impl Fn(&Pattern) -> bool,
    ) -> Says<'_> {
        if let Some(p) = self.deny.iter().find(|p| deny(p)) {
            return Says::Deny(&p.rule);
        }
        if let Some(p) = self.ask.iter().find(|p| ask(p)) {
            return Says::Ask(&p.rule);
        }
        match self.allow.iter().find(|p| allow(p)) {
            Some(p) => Says::Allow(&p.rule),
            None => Says::Nothing,
        }
    }
}

/// Whether host `pattern` (`example.com`, `*.example.com`, `*`) names
/// `host`; with `subdomains`, `example.com` names `a.example.com` too.
fn host_matches(pattern: &str, host: &str, subdomains: bool) -> bool {
    if pattern == "*" {
        return true;
    }
    match pattern.strip_prefix("*.") {
        Some(base) => host.ends_with(&format!(".{base}")) || (subdomains && host == base),
        None => host == pattern || (subdomains && host.ends_with(&format!(".{pattern}"))),
    }
}

/// Path rules compiled: each matcher with its rule as written.
pub struct Compiled<'a> {
    deny: Vec<(globset::GlobMatcher, &'a str)>,
    ask: Vec<(globset::GlobMatcher, &'a str)>,
    allow: Vec<(globset::GlobMatcher, &'a str)>,
}

impl<'a> Compiled<'a> {
    /// What the rules say about `path` as named (a folder's rule covers
    /// what is beneath it).
    pub fn says(&self, path: &Path) -> Says<'a> {
        let hit = |list: &[(globset::GlobMatcher, &'a str)]| {
            list.iter()
                .find(|(m, _)| path.ancestors().any(|p| m.is_match(p)))
                .map(|(_, rule)| *rule)
        };
        if let Some(rule) = hit(&self.deny) {
            Says::Deny(rule)
        } else if let Some(rule) = hit(&self.ask) {
            Says::Ask(rule)
        } else if let Some(rule) = hit(&self.allow) {
            Says::Allow(rule)
        } else {
            Says::Nothing
        }
    }
}

/// Whether `pattern` is a glob pattern that can be matched.
pub fn valid_pattern(pattern: &str) -> Result<(), String> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The rules on files read, files edited, and hosts fetched from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    #[serde(default)]
    pub read: Lists,
    #[serde(default)]
    pub edit: Lists,
    #[serde(default)]
    pub fetch: Lists,
}

impl Access {
    pub fn is_empty(&self) -> bool {
        self.read.is_empty() && self.edit.is_empty() && self.fetch.is_empty()
    }

    pub fn extend(&mut self, other: Access) {
        self.read.extend(other.read);
        self.edit.extend(other.edit);
        self.fetch.extend(other.fetch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(rule: &str, pattern: &str) -> Pattern {
        Pattern {
            rule: rule.into(),
            pattern: pattern.into(),
        }
    }

    #[test]
    fn paths_and_the_folders_above_them() {
        let mut read = Lists::default();
        read.add(Kind::Deny, pattern("Read(./.env)", "/ws/.env"));
        read.add(Kind::Deny, pattern("Read(./secrets/**)", "/ws/secrets/**"));
        read.add(Kind::Ask, pattern("Read(*.pem)", "/ws/**/*.pem"));
        read.add(Kind::Allow, pattern("Read(./src/**)", "/ws/src/**"));
        let says = |p: &str| read.says_path(Path::new(p));
        assert_eq!(says("/ws/.env"), Says::Deny("Read(./.env)"));
        assert_eq!(says("/ws/secrets/a/b"), Says::Deny("Read(./secrets/**)"));
        assert_eq!(says("/ws/a/key.pem"), Says::Ask("Read(*.pem)"));
        assert_eq!(says("/ws/src/main.rs"), Says::Allow("Read(./src/**)"));
        assert_eq!(says("/ws/.env.example"), Says::Nothing);
    }

    #[test]
    fn hosts_deny_their_subdomains_and_allow_only_themselves() {
        let mut fetch = Lists::default();
        fetch.add(Kind::Deny, pattern("WebFetch(domain:evil.com)", "evil.com"));
        fetch.add(Kind::Allow, pattern("WebFetch(domain:docs.rs)", "docs.rs"));
        assert_eq!(
            fetch.says_host("a.evil.com"),
            Says::Deny("WebFetch(domain:evil.com)")
        );
        assert_eq!(
            fetch.says_host("EVIL.com."),
            Says::Deny("WebFetch(domain:evil.com)")
        );
        assert_eq!(
            fetch.says_host("docs.rs"),
            Says::Allow("WebFetch(domain:docs.rs)")
        );
        assert_eq!(fetch.says_host("x.docs.rs"), Says::Nothing);
        assert_eq!(fetch.says_host("notevil.com"), Says::Nothing);
        fetch.add(Kind::Deny, pattern("WebFetch(domain:*.gh.io)", "*.gh.io"));
        assert_eq!(
            fetch.says_host("a.gh.io"),
            Says::Deny("WebFetch(domain:*.gh.io)")
        );
        assert_eq!(
            fetch.says_host("gh.io"),
            Says::Deny("WebFetch(domain:*.gh.io)")
        );
    }
}
