//! The skills and custom commands a session has, as the app's command
//! list shows them.

use serde::{Deserialize, Serialize};

/// One skill or custom command, typed as `/NAME`.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogEntry {
    /// Its name, typed after the `/`.
    pub name: String,
    /// What it takes (`argument-hint`), if it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// What it does, as its file says.
    pub description: String,
    /// A skill (else a custom command).
    pub skill: bool,
}
