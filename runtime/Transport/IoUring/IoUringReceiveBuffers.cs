using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using Falconet.Buffers;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>
/// A loop's provided-buffer ring (<c>IORING_REGISTER_PBUF_RING</c>) of pool blocks, which the multishot receives of its
/// connections fill: the kernel picks a free block when bytes arrive, the connection copies them out to its reader and
/// gives the block back at once. Blocks are added in steps as the loop's connections need them, up to
/// <see cref="Capacity"/>; a connection that finds none waits until one comes back.
/// </summary>
internal sealed unsafe class IoUringReceiveBuffers : IDisposable
{
    /// <summary>The buffer group id of every loop's ring (one group per ring).</summary>
    public const ushort GroupId = 0;

    /// <summary>Entries of the ring: the most blocks one loop lends to the kernel at once (16 MiB of 4 KiB blocks).</summary>
    public const int Capacity = 4096;

    /// <summary>Blocks added at a time, at start and whenever the kernel ran out.</summary>
    private const int Step = 64;

    private readonly IoUringRing _ring;
    private readonly SlabMemoryPool _pool;
    private readonly MemoryBlock?[] _blocks = new MemoryBlock?[Capacity];
    private readonly byte*[] _addresses = new byte*[Capacity];
    private readonly List<IIoUringBufferWaiter> _waiting = new();
    private ProvidedBuffer* _entries;
    private nuint _size;
    private ushort _tail;
    private int _count;
    private bool _registered;

    public IoUringReceiveBuffers(IoUringRing ring, SlabMemoryPool pool)
    {
        _ring = ring;
        _pool = pool;
        _size = (nuint)(Capacity * sizeof(ProvidedBuffer));
        nint memory = Mmap(0, _size, ProtRead | ProtWrite, MapPrivate | MapAnonymous, -1, 0);
        if (memory == -1)
        {
            throw new IoUringException("mmap(buffer ring)", Marshal.GetLastPInvokeError());
        }

        _entries = (ProvidedBuffer*)memory;
        var registration = new BufferRingRegistration { RingAddress = (ulong)memory, RingEntries = Capacity, GroupId = GroupId };
        int result = ring.Register(RegisterPbufRing, &registration, 1);
        if (result < 0)
        {
            Munmap(memory, _size);
            _entries = null;
            throw new IoUringException("io_uring_register(IORING_REGISTER_PBUF_RING)", -result);
        }

        _registered = true;
        Grow();
    }

    /// <summary>Blocks lent to the kernel or held by connections.</summary>
    public int Count => _count;

    /// <summary>The bytes a completion with buffer <paramref name="id"/> received, from <paramref name="start"/>.</summary>
    public ReadOnlySpan<byte> Data(int id, int start, int end) => new(_addresses[id] + start, end - start);

    /// <summary>Gives buffer <paramref name="id"/> back to the kernel (its bytes were copied out, or are no longer wanted).</summary>
    public void Provide(int id)
    {
        ProvidedBuffer* entry = &_entries[_tail & (Capacity - 1)];
        entry->Address = (ulong)_addresses[id];
        entry->Length = SlabMemoryPool.BlockSize;
        entry->BufferId = (ushort)id;

        // Release: the entry is visible before the tail that publishes it (the tail overlays the first entry's last field).
        _tail++;
        Volatile.Write(ref *(ushort*)((byte*)_entries + 14), _tail);
    }

    /// <summary>
    /// The kernel found no buffer for <paramref name="waiter"/>: more blocks are added while the ring has room; otherwise the
    /// waiter is told once some come back (<see cref="ResumeWaiters"/>).
    /// </summary>
    public void OnExhausted(IIoUringBufferWaiter waiter)
    {
        if (_count < Capacity)
        {
            Grow();
            waiter.OnBuffersAvailable();
            return;
        }

        _waiting.Add(waiter);
    }

    /// <summary>At the end of a loop turn: re-arms the receives that waited for buffers (blocks have come back meanwhile).</summary>
    public void ResumeWaiters()
    {
        if (_waiting.Count == 0)
        {
            return;
        }

        // Copied first: a waiter may run out again and add itself back.
        IIoUringBufferWaiter[] waiting = _waiting.ToArray();
        _waiting.Clear();
        foreach (IIoUringBufferWaiter waiter in waiting)
        {
            waiter.OnBuffersAvailable();
        }
    }

    /// <summary>Forgets a waiter that closed.</summary>
    public void RemoveWaiter(IIoUringBufferWaiter waiter) => _waiting.Remove(waiter);

    public void Dispose()
    {
        if (_registered)
        {
            var registration = new BufferRingRegistration { GroupId = GroupId };
            _ring.Register(UnregisterPbufRing, &registration, 1);
            _registered = false;
        }

        // Called once every connection of the loop closed and the ring is unregistered: the kernel holds none of them.
        for (int i = 0; i < _count; i++)
        {
            if (_blocks[i] is { } block)
            {
                _blocks[i] = null;
                _addresses[i] = null;
                _pool.Return(block);
            }
        }

        _count = 0;
        if (_entries is not null)
        {
            Munmap((nint)_entries, _size);
            _entries = null;
        }
    }

    private void Grow()
    {
        int end = Math.Min(Capacity, _count + Step);
        for (int id = _count; id < end; id++)
        {
            MemoryBlock block = _pool.Rent();
            _blocks[id] = block;

            // Pool blocks live in pinned slabs: the address stays valid while the kernel holds the block.
            _addresses[id] = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(block.Memory.Span));
            Provide(id);
        }

        _count = end;
    }
}

/// <summary>A connection whose multishot receive ended because the loop's buffer ring was empty.</summary>
internal interface IIoUringBufferWaiter
{
    /// <summary>Buffers are available again: arm the receive again if it is still wanted.</summary>
    void OnBuffersAvailable();
}
