//! Which API a request speaks, from its method and path: the paths the
//! OpenAI, Anthropic and OpenRouter SDKs post to. Everything else is not
//! the gateway's business and passes through untouched.

/// The APIs the gateway reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// OpenAI chat completions (`POST …/chat/completions`).
    ChatCompletions,
    /// OpenAI Responses (`POST …/responses`).
    Responses,
    /// Anthropic Messages (`POST …/messages`).
    AnthropicMessages,
}

impl Api {
    /// A short stable name (`chat`, `responses`, `anthropic`).
    pub fn name(self) -> &'static str {
        match self {
            Api::ChatCompletions => "chat",
            Api::Responses => "responses",
            Api::AnthropicMessages => "anthropic",
        }
    }

    /// The API named by [`Api::name`].
    pub fn from_name(name: &str) -> Option<Api> {
        match name {
            "chat" => Some(Api::ChatCompletions),
            "responses" => Some(Api::Responses),
            "anthropic" => Some(Api::AnthropicMessages),
            _ => None,
        }
    }
}

/// The API of a request, or `None` (pass it through): `POST` to a path
/// ending in `/chat/completions`, `/responses` or `/messages` (under any
/// prefix: `/v1/…`, OpenRouter's `/api/v1/…`), query string ignored.
pub fn route(method: &str, path: &str) -> Option<Api> {
    if !method.eq_ignore_ascii_case("POST") {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or_default().trim_end_matches('/');
    if path.ends_with("/chat/completions") {
        Some(Api::ChatCompletions)
    } else if path.ends_with("/responses") {
        Some(Api::Responses)
    } else if path.ends_with("/messages") {
        Some(Api::AnthropicMessages)
    } else {
        None
    }
}
