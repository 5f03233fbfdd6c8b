using System;
using System.Collections.Generic;
using Falconet.Buffers;

namespace Falconet.Server;

/// <summary>
/// Gives memory back from the server's heartbeat: the free slabs of idle pools (<see cref="IdleSlabReleaser"/>), then a
/// collection that returns the freed memory to the system, once per idle spell of the server and after a large release.
/// </summary>
/// <remarks>
/// Released slabs are garbage only; an idle process runs no collection, and an ordinary one keeps freed regions committed,
/// so without an explicit one the resident memory stays at its peak. The collection is aggressive (blocking,
/// compacting, decommitting), so it is asked for only when it hurts nobody: when the server has started no request for
/// the idle time (once, until requests come again), or when a tick released at least <see cref="CollectAfterReleasing"/>.
/// </remarks>
internal sealed class IdleMemory
{
    /// <summary>Bytes of slabs released in one tick that warrant a collection even while requests go on (1 MiB).</summary>
    public const long CollectAfterReleasing = 1024 * 1024;

    private readonly IdleSlabReleaser _slabs;
    private readonly long _idleTicks;
    private readonly Action _collect;
    private long _requests;
    private long _requestsIdleSince;
    private bool _collectedThisSpell = true;

    /// <summary>Watches <paramref name="pools"/> and the server's requests from <paramref name="now"/>; <paramref name="collect"/> returns memory to the system.</summary>
    public IdleMemory(IReadOnlyList<SlabMemoryPool> pools, long idleTicks, long now, Action? collect = null)
    {
        _slabs = new IdleSlabReleaser(pools, idleTicks, now);
        _idleTicks = idleTicks;
        _requestsIdleSince = now;
        _collect = collect ?? CollectAggressively;
    }

    /// <summary>One heartbeat tick at <paramref name="now"/>, with the count of requests the server has started so far; returns the slabs released.</summary>
    public int OnTick(long now, long requestsStarted)
    {
        int released = _slabs.OnTick(now);
        if (requestsStarted != _requests)
        {
            _requests = requestsStarted;
            _requestsIdleSince = now;
            _collectedThisSpell = false;
        }

        bool idleSpell = !_collectedThisSpell && now - _requestsIdleSince >= _idleTicks;
        if (idleSpell || (long)released * SlabMemoryPool.SlabSize >= CollectAfterReleasing)
        {
            _collectedThisSpell = idleSpell || _collectedThisSpell;
            _collect();
        }

        return released;
    }

    private static void CollectAggressively() => GC.Collect(2, GCCollectionMode.Aggressive, blocking: true, compacting: true);
}
