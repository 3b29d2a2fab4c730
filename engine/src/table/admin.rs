//! A table's maintenance on request: flush, compact and split, for the
//! whole table or one region.

use std::sync::Arc;

use super::Table;
use crate::catalog::TableState;
use crate::error::{Error, Result};
use crate::region::Region;

impl Table {
    /// Flushes every region's memstores to HFiles and waits for it.
    pub fn flush(&self) -> Result<()> {
        let state = self.state()?;
        for region in &state.regions {
            self.supervisor.flush(&self.inner, region)?;
        }
        Ok(())
    }

    /// Flushes one region (by id, see [`Table::regions`]).
    pub fn flush_region(&self, region_id: u64) -> Result<()> {
        let state = self.state()?;
        let region = Self::region_by_id(&state, region_id)?;
        self.supervisor.flush(&self.inner, region)
    }

    /// Compacts every region: L0 into L1, then whatever the level sizes ask
    /// for. Runs in the caller's thread.
    pub fn compact(&self) -> Result<()> {
        let state = self.state()?;
        for region in &state.regions {
            self.supervisor.compact_now(&self.inner, region, false)?;
        }
        Ok(())
    }

    /// Rewrites every store of every region into one sorted run at its
    /// deepest level, dropping everything reads can no longer see.
    pub fn major_compact(&self) -> Result<()> {
        let state = self.state()?;
        for region in &state.regions {
            self.supervisor.compact_now(&self.inner, region, true)?;
        }
        Ok(())
    }

    /// Compacts one region (minor or major).
    pub fn compact_region(&self, region_id: u64, major: bool) -> Result<()> {
        let state = self.state()?;
        let region = Self::region_by_id(&state, region_id)?;
        self.supervisor.compact_now(&self.inner, region, major)
    }

    /// Splits regions (HBase `split`): with no key, every region at its
    /// middle key (regions that cannot be cut are left alone); with a key,
    /// the region holding it, at it. Writes to the table wait meanwhile.
    pub fn split(&self, key: Option<&[u8]>) -> Result<()> {
        let state = self.state()?;
        match key {
            Some(key) => {
                let region = Self::region(&state, key)?;
                self.supervisor
                    .split(&self.inner, region, Some(key.to_vec()))?;
            }
            None => {
                for region in &state.regions {
                    self.supervisor.split(&self.inner, region, None)?;
                }
            }
        }
        Ok(())
    }

    /// Splits one region (by id) at `key`, or at its middle key.
    pub fn split_region(&self, region_id: u64, key: Option<&[u8]>) -> Result<()> {
        let state = self.state()?;
        let region = Self::region_by_id(&state, region_id)?;
        self.supervisor
            .split(&self.inner, region, key.map(<[u8]>::to_vec))?;
        Ok(())
    }

    /// Merges two adjacent regions (by id, in either order) into one
    /// holding the files of both (HBase `merge_region`); returns the merged
    /// region's id. Writes to the table wait meanwhile. Regions that are not
    /// next to each other fail with [`Error::RegionsNotAdjacent`].
    pub fn merge_regions(&self, first_id: u64, second_id: u64) -> Result<u64> {
        let state = self.state()?;
        let mut first = Self::region_by_id(&state, first_id)?;
        let mut second = Self::region_by_id(&state, second_id)?;
        if second.start() < first.start() {
            std::mem::swap(&mut first, &mut second);
        }
        match self.supervisor.merge(&self.inner, first, second)? {
            Some(merged) => Ok(merged.id()),
            None => Err(Error::RegionNotFound {
                table: self.inner.name.clone(),
                region_id: first.id(),
            }),
        }
    }

    pub(super) fn region_by_id(state: &TableState, region_id: u64) -> Result<&Arc<Region>> {
        state
            .regions
            .iter()
            .find(|r| r.id() == region_id)
            .ok_or_else(|| Error::RegionNotFound {
                table: state.descriptor.name().to_owned(),
                region_id,
            })
    }
}
