//! The files an approved project hook runs are code that runs later,
//! outside the call that writes them: a `write_file` or `edit_file` of one
//! is asked in every mode but yolo (read-only refuses it anyway), whoever
//! makes the call. The scripts are found once per hook set (again when the
//! user approves the project's hooks), not on every write.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use super::{Before, Call, CallStage, Said, StageCx};
use crate::events::ApprovalMode;
use crate::hooks::{HookSet, ProjectScripts};
use crate::tools::{Access, Target};

/// The stage, with the scripts of the hook set it last saw.
#[derive(Default)]
pub(in crate::agent) struct HookScripts {
    found: Mutex<Option<(Arc<HookSet>, Arc<ProjectScripts>)>>,
}

impl HookScripts {
    /// The scripts of `cx`'s hook set, found now if the set is new.
    fn scripts(&self, cx: &StageCx<'_>) -> Arc<ProjectScripts> {
        let set = &cx.host.config.tools.hooks;
        let mut found = crate::agent::shared::lock(&self.found);
        match &*found {
            Some((seen, scripts)) if Arc::ptr_eq(seen, set) => scripts.clone(),
            _ => {
                let scripts = Arc::new(ProjectScripts::of(set, cx.host.shared.workspace.root()));
                *found = Some((set.clone(), scripts.clone()));
                scripts
            }
        }
    }
}

impl CallStage for HookScripts {
    fn name(&self) -> &'static str {
        "hook-scripts"
    }

    fn before<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, Before> {
        let before = (|| {
            let spec = cx.tools.spec(call.name)?;
            let Target::File(path) = cx.tools.target(call.name, call.input) else {
                return None;
            };
            if spec.access != Access::Write
                || matches!(cx.mode(), ApprovalMode::ReadOnly | ApprovalMode::Yolo)
            {
                return None;
            }
            let scripts = self.scripts(cx);
            if scripts.is_empty() {
                return None;
            }
            let file = cx.host.shared.workspace.resolve(path).ok()?;
            let script = scripts.find(&file)?;
            Some(Before::ask(format!(
                "{} is run by an approved hook of this project: a change to it runs later, outside this call. Allow `{}` to change it?",
                script.display(),
                call.name
            )))
        })();
        Box::pin(std::future::ready(before.unwrap_or_else(Before::go_on)))
    }
}
