using System;
using System.Collections.Generic;

namespace Falconet.Buffers;

/// <summary>
/// Gives back the free slabs of pools that rented nothing for a while, from a periodic tick (the server's heartbeat), so
/// memory taken at a peak returns once the load is gone, without a cost on the rent and return paths.
/// </summary>
/// <remarks>
/// A pool counts as idle while its rent count stays the same. Once idle for the idle time, its free slabs are released,
/// and again each idle time after, for blocks that came back meanwhile (connections that closed). A busy pool is left
/// alone: a request loop in steady state rents nothing, so steady traffic on kept connections is no reason to keep
/// slabs that nobody rents, and releasing them costs nothing until a burst needs them again.
/// </remarks>
internal sealed class IdleSlabReleaser
{
    private readonly IReadOnlyList<SlabMemoryPool> _pools;
    private readonly long _idleTicks;
    private readonly long[] _rents;
    private readonly long[] _idleSince;
    private long _released;

    /// <summary>Watches <paramref name="pools"/> from <paramref name="now"/>; idle for <paramref name="idleTicks"/> timestamp ticks means release.</summary>
    public IdleSlabReleaser(IReadOnlyList<SlabMemoryPool> pools, long idleTicks, long now)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(idleTicks, 0);
        _pools = pools;
        _idleTicks = idleTicks;
        _rents = new long[pools.Count];
        _idleSince = new long[pools.Count];
        for (int i = 0; i < pools.Count; i++)
        {
            _rents[i] = pools[i].BlocksRented;
            _idleSince[i] = now;
            _released += pools[i].SlabsReleased;
        }
    }

    /// <summary>
    /// Checks every pool at <paramref name="now"/>; returns the slabs released since the previous tick (a release handed
    /// to a pool's owner thread shows in the tick after it ran).
    /// </summary>
    public int OnTick(long now)
    {
        long released = 0;
        for (int i = 0; i < _pools.Count; i++)
        {
            SlabMemoryPool pool = _pools[i];
            long rents = pool.BlocksRented;
            if (rents != _rents[i])
            {
                _rents[i] = rents;
                _idleSince[i] = now;
            }
            else if (now - _idleSince[i] >= _idleTicks)
            {
                pool.ReleaseFreeSlabs();
                _idleSince[i] = now;
            }

            released += pool.SlabsReleased;
        }

        long delta = released - _released;
        _released = released;
        return (int)delta;
    }
}
