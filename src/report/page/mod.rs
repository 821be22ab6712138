//! The report page a user pastes into a document: HTML and Markdown, their tables, figures and SVG charts.

pub mod across;
pub mod charts;
pub mod curve;
pub mod figures;
pub mod hockey;
pub mod html;
pub mod markdown;
pub mod outcomes;
pub mod ranks;
pub mod raster;
pub mod report_compare;
pub mod report_meta;
pub mod report_tables;
pub mod rounds;
pub mod study_figures;
pub mod study_tables;
