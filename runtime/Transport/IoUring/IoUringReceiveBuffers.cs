using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>
/// A loop's provided-buffer ring (<c>IORING_REGISTER_PBUF_RING</c>), which the multishot receives of its connections fill:
/// the kernel picks a free buffer when bytes arrive, the connection copies them out to its reader's pool block and gives
/// the buffer back at once. Like a socket's receive buffer, this memory is the loop's own, not the pool's: pool blocks stay
/// a count of what connections hold. Buffers are added in steps of 64 (256 KiB, one pinned array) when the kernel runs out,
/// up to <see cref="Capacity"/>, and kept until the loop stops; a connection that finds none waits until one comes back.
/// </summary>
internal sealed unsafe class IoUringReceiveBuffers : IDisposable
{
    /// <summary>The buffer group id of every loop's ring (one group per ring).</summary>
    public const ushort GroupId = 0;

    /// <summary>The size of one buffer: one receive brings at most this many bytes.</summary>
    public const int BufferSize = 4096;

    /// <summary>Entries of the ring: the most buffers one loop lends to the kernel (16 MiB).</summary>
    public const int Capacity = 4096;

    /// <summary>Buffers added at a time, at start and whenever the kernel ran out.</summary>
    private const int Step = 64;

    private readonly IoUringRing _ring;
    private readonly List<byte[]> _memory = new();
    private readonly byte*[] _addresses = new byte*[Capacity];
    private readonly List<IIoUringBufferWaiter> _waiting = new();
    private ProvidedBuffer* _entries;
    private nuint _size;
    private ushort _tail;
    private int _count;
    private bool _registered;

    public IoUringReceiveBuffers(IoUringRing ring)
    {
        _ring = ring;
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

    /// <summary>Buffers lent to the kernel or held by connections.</summary>
    public int Count => _count;

    /// <summary>The bytes a completion with buffer <paramref name="id"/> received, from <paramref name="start"/>.</summary>
    public ReadOnlySpan<byte> Data(int id, int start, int end) => new(_addresses[id] + start, end - start);

    /// <summary>Gives buffer <paramref name="id"/> back to the kernel (its bytes were copied out, or are no longer wanted).</summary>
    public void Provide(int id)
    {
        ProvidedBuffer* entry = &_entries[_tail & (Capacity - 1)];
        entry->Address = (ulong)_addresses[id];
        entry->Length = BufferSize;
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
        _memory.Clear();
        _count = 0;
        if (_entries is not null)
        {
            Munmap((nint)_entries, _size);
            _entries = null;
        }
    }

    private void Grow()
    {
        int count = Math.Min(Capacity, _count + Step) - _count;

        // Pinned: the kernel writes into it whenever bytes arrive.
        byte[] memory = GC.AllocateUninitializedArray<byte>(count * BufferSize, pinned: true);
        _memory.Add(memory);
        byte* start = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(memory));
        for (int i = 0; i < count; i++)
        {
            _addresses[_count + i] = start + (i * BufferSize);
            Provide(_count + i);
        }

        _count += count;
    }
}

/// <summary>A connection whose multishot receive ended because the loop's buffer ring was empty.</summary>
internal interface IIoUringBufferWaiter
{
    /// <summary>Buffers are available again: arm the receive again if it is still wanted.</summary>
    void OnBuffersAvailable();
}
