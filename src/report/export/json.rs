//! JSON export: the result model as pretty JSON. Pure.

use crate::results::model::RunResult;

pub fn render(result: &RunResult) -> String {
    let mut text = serde_json::to_string_pretty(result).expect("the result model always serialises");
    text.push('\n');
    text
}
