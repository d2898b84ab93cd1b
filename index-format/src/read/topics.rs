//! The topic listings: every topic with its entry count, and the counts of entries in
//! default results (`visible_topics`, `visible_len`) with retired and superseded left out.

use super::{Index, TopicCount};
use crate::error::FormatError;

impl<B: AsRef<[u8]>> Index<B> {
    /// All topics with their entry counts, sorted by name.
    pub fn topics(&self) -> Result<Vec<TopicCount<'_>>, FormatError> {
        self.topic_rows()
            .iter()
            .map(|t| {
                Ok(TopicCount {
                    topic: self.str_at(t.name, "topic name")?,
                    count: t.entry_count.get(),
                })
            })
            .collect()
    }

    /// [`Index::topics`] counting only entries in default results (not retired or
    /// superseded); a topic left empty is dropped. As cheap as `topics` when none is hidden.
    pub fn visible_topics(&self) -> Result<Vec<TopicCount<'_>>, FormatError> {
        let mut topics = self.topics()?;
        let hidden = self.hidden_rows();
        if hidden.is_empty() {
            return Ok(topics);
        }
        for h in hidden {
            let row = self.record(h.doc.get())?.topic.get() as usize;
            if let Some(t) = topics.get_mut(row) {
                t.count = t.count.saturating_sub(1);
            }
        }
        topics.retain(|t| t.count > 0);
        Ok(topics)
    }

    /// Entries in default results: all but the retired and superseded ones.
    pub fn visible_len(&self) -> u32 {
        self.len()
            .saturating_sub(u32::try_from(self.hidden_rows().len()).unwrap_or(u32::MAX))
    }
}
