//! Chat-platform and code-host integrations (decisions D-86 to D-88): public routes that
//! turn another system's messages into task changes, through the task use cases.

mod chat;
mod codehost;

pub use self::chat::{ChatCaller, ChatMessage, ChatService, ChatSettings, UNMAPPED_COMPLETION};
pub use self::codehost::{
    CodeHostPorts, CodeHostService, HostDelivery, IssuedConnection, NewConnection,
};
