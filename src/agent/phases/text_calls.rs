//! A tool call written as text ran nothing: the model is told how to call
//! tools and asked again, at most [`MAX_CORRECTIONS`] times a turn.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{BeforeEnd, Next};
use crate::agent::Session;
use crate::events::{ErrorKind, Event, StopReason};

/// Corrective messages per turn for tool calls written as text.
const MAX_CORRECTIONS: u32 = 2;
const TEXT_TOOL_CALL_NOTE: &str = "Your last reply wrote a tool call as text, so nothing was run. To use a tool, \
call it through the tools interface (a structured tool call), not in your message text.";

/// The phase, with the corrections made this turn.
#[derive(Default)]
pub(super) struct TextCalls {
    corrections: u32,
}

impl BeforeEnd for TextCalls {
    fn name(&self) -> &'static str {
        "text-tool-calls"
    }

    fn check<'a>(
        &'a mut self,
        session: &'a mut Session,
        stop: &'a StopReason,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Next> {
        Box::pin(async move {
            if *stop != StopReason::TextToolCall || self.corrections >= MAX_CORRECTIONS {
                return Next::End;
            }
            self.corrections += 1;
            session.emit(Event::Error {
                kind: ErrorKind::TextToolCall,
                message: "The model wrote a tool call as text; it was not run, and the model was asked to use the tools API."
                    .into(),
            });
            session.add_user_text(TEXT_TOOL_CALL_NOTE, false);
            Next::GoOn
        })
    }
}
