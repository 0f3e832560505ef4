//! Algorithm descriptions.
