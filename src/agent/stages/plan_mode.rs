//! Plan mode against the hooks: a hook's "allow" spares a question the
//! mode would ask, but in plan mode the only question about a command is
//! whether to run it unconfined (there is no sandbox here), and that is
//! the user's alone. This stage asks it whatever a hook says (the gate's
//! refusals still stand: a deny rule, headless).

use futures_util::future::BoxFuture;

use super::{Before, Call, CallStage, Said, StageCx};
use crate::events::ApprovalMode;
use crate::tools::Access;

/// The stage: no state.
#[derive(Default)]
pub(in crate::agent) struct PlanMode;

impl CallStage for PlanMode {
    fn name(&self) -> &'static str {
        "plan-mode"
    }

    fn before<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, Before> {
        let unconfined = cx.mode() == ApprovalMode::Plan
            && cx.host.config.tools.sandbox.is_none()
            && cx
                .tools
                .spec(call.name)
                .is_some_and(|spec| spec.access == Access::Exec);
        let before = if unconfined {
            Before::ask(crate::agent::plan_mode::NO_SANDBOX_QUESTION.into())
        } else {
            Before::go_on()
        };
        Box::pin(std::future::ready(before))
    }
}
