//! The config file: where it is (`WAYPOINT_CONFIG`, else the platform's
//! config folder), reading it, and parsing it into a [`Layer`]. Invariant:
//! a parse error says where, never the line (it may hold a key).

use std::path::{Path, PathBuf};

use super::{ConfigError, Layer};

/// Where the config file is: `WAYPOINT_CONFIG`, else the platform's config folder.
pub fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = env("WAYPOINT_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    directories::ProjectDirs::from("", "", "waypoint").map(|d| d.config_dir().join("config.toml"))
}

/// Reads the config file; a missing file is not an error.
pub fn read_file(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// A config file's path and its text.
pub type ConfigFile = (PathBuf, String);

/// Finds and reads the config file: `(where it is looked for, its path and text
/// if it exists)`. A file named by `WAYPOINT_CONFIG` must exist.
pub fn load(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Option<PathBuf>, Option<ConfigFile>), ConfigError> {
    let path = config_path(env);
    let Some(path) = path else {
        return Ok((None, None));
    };
    match read_file(&path)? {
        Some(text) => Ok((Some(path.clone()), Some((path, text)))),
        None if env("WAYPOINT_CONFIG").is_some_and(|p| !p.is_empty()) => Err(ConfigError::Read {
            path,
            message: "no such file (named by WAYPOINT_CONFIG)".into(),
        }),
        None => Ok((Some(path), None)),
    }
}

/// The config file's layer, parsed; an error says where, never the line.
pub(super) fn file_layer(file: Option<&ConfigFile>) -> Result<Option<(&Path, Layer)>, ConfigError> {
    let Some((path, text)) = file else {
        return Ok(None);
    };
    let layer = toml::from_str::<Layer>(text).map_err(|e| ConfigError::Parse {
        path: path.clone(),
        message: parse_message(text, &e),
    })?;
    Ok(Some((path.as_path(), layer)))
}

/// The parser's message and the line and column, but never the line itself:
/// it may hold a key.
fn parse_message(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {col}: {message}")
        }
        None => message.to_string(),
    }
}
