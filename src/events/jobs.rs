//! A background job as the app lists it.

use serde::{Deserialize, Serialize};

/// One background job.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInfo {
    /// Its number in the session, from 1.
    pub id: u32,
    /// Its command, in one line.
    pub command: String,
    /// How it ended; `None` while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}
