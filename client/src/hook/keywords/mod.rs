//! Query terms for the hooks: keywords of a prompt or an error, symbols an edit removes,
//! what a file path names, the phrases of a failure an entry may quote, and whether a shell
//! command is a build. One module per input.

mod command;
mod edits;
mod error;
mod files;
mod phrases;
mod prompt;
mod terms;

pub use command::{FailedCommand, is_build_command};
pub use edits::removed_symbols;
pub use error::{ERROR_TERMS, error_terms, error_terms_up_to, error_text};
pub use files::{
    code_languages, file_name_term, is_config_name, name_words, path_stem, path_words,
    pattern_words, plain_name_words, tool_names, tool_words,
};
pub use phrases::{Phrases, phrases, quotes};
pub use prompt::{
    PROMPT_TERMS, code_names, is_question, is_work_request, prompt_terms, prompt_terms_up_to,
};
