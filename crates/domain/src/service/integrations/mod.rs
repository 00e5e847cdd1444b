//! Chat-platform and code-host integrations (decisions D-86 to D-88): public routes that
//! turn another system's messages into task changes, through the task use cases.

mod chat;

pub use self::chat::{ChatAnswer, ChatMessage, ChatService, ChatSettings};
