//! YAML front matter (`---` … `---` at the top of a Markdown file), read
//! with serde-saphyr: the fields Waypoint uses, every other one ignored.

use serde::Deserialize;

/// The fields read; unknown ones (`license`, `allowed-tools`,
/// `metadata`, …) are ignored.
#[derive(Debug, Default, Deserialize)]
struct Front {
    name: Option<String>,
    description: Option<String>,
    #[serde(rename = "argument-hint")]
    argument_hint: Option<String>,
}

/// The front matter's text (without its fences) and the body; no front
/// matter: `None` and the whole text.
pub fn split(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..at]), &rest[at + line.len()..]);
        }
        at += line.len();
    }
    (None, text)
}

fn parse(yaml: &str) -> Result<Front, String> {
    if yaml.trim().is_empty() {
        return Ok(Front::default());
    }
    serde_saphyr::from_str::<Front>(yaml).map_err(|e| {
        let first = e.to_string();
        format!(
            "its front matter is not valid YAML: {}",
            crate::text::clean_line(first.lines().next().unwrap_or(""))
        )
    })
}

/// A skill's name (the folder's when the front matter has none) and its
/// description (required: the model chooses by it).
pub fn skill(text: &str, folder: &str) -> Result<(String, String), String> {
    let (yaml, _) = split(text);
    let yaml = yaml.ok_or("it has no front matter (`---` with name and description)")?;
    let front = parse(yaml)?;
    let name = front
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| folder.to_string());
    if !valid_name(&name) {
        return Err(format!(
            "its name `{}` is not a word of letters, digits, `-`, `_` or `:`",
            crate::text::clean_line(&name)
        ));
    }
    let description = front
        .description
        .map(|d| crate::text::clean_line(d.trim()).into_owned())
        .filter(|d| !d.is_empty())
        .ok_or("its front matter has no `description`")?;
    Ok((name, description))
}

/// A command's description (the front matter's, else the body's first
/// line) and argument hint, and its body.
pub fn command(text: &str) -> Result<(String, Option<String>, &str), String> {
    let (yaml, body) = split(text);
    let front = match yaml {
        Some(yaml) => parse(yaml)?,
        None => Front::default(),
    };
    let description = front
        .description
        .map(|d| crate::text::clean_line(d.trim()).into_owned())
        .filter(|d| !d.is_empty())
        .or_else(|| {
            body.lines()
                .map(|l| l.trim().trim_start_matches('#').trim())
                .find(|l| !l.is_empty())
                .map(|l| crate::text::clean_line(l).into_owned())
        })
        .unwrap_or_default();
    Ok((description, front.argument_hint, body))
}

/// A name a slash command can be typed as.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
}
