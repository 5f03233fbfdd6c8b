using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

/// <summary>
/// A loop's provided-buffer ring (<c>IORING_REGISTER_PBUF_RING</c>), which the multishot receives of its connections fill:
/// the kernel picks a free buffer when bytes arrive, and the connection copies the bytes out (to its reader, or into blocks
/// of its own) and gives the buffer back while the loop reaps that completion. No buffer waits for a reader, so a small fixed
/// ring serves any number of connections: <see cref="Count"/> buffers in one pinned array, the loop's own memory like a
/// socket's receive buffer (pool blocks stay a count of what connections hold). A receive the kernel found no buffer for,
/// in a turn that filled them all, is armed again at the end of the turn, once they are back.
/// </summary>
internal sealed unsafe class IoUringReceiveBuffers : IDisposable
{
    /// <summary>The buffer group id of every loop's ring (one group per ring).</summary>
    public const ushort GroupId = 0;

    /// <summary>The size of one buffer: one receive brings at most this many bytes.</summary>
    public const int BufferSize = 4096;

    /// <summary>Buffers of the ring (1 MiB): completions one turn may bring before a receive must wait for the next turn.</summary>
    public const int Count = 256;

    private readonly IoUringRing _ring;
    private readonly byte[] _memory;
    private readonly byte* _start;
    private readonly List<IIoUringBufferWaiter> _waiting = new();
    private ProvidedBuffer* _entries;
    private nuint _size;
    private ushort _tail;
    private bool _registered;

    public IoUringReceiveBuffers(IoUringRing ring)
    {
        _ring = ring;
        _size = (nuint)(Count * sizeof(ProvidedBuffer));
        nint memory = Mmap(0, _size, ProtRead | ProtWrite, MapPrivate | MapAnonymous, -1, 0);
        if (memory == -1)
        {
            throw new IoUringException("mmap(buffer ring)", Marshal.GetLastPInvokeError());
        }

        _entries = (ProvidedBuffer*)memory;
        var registration = new BufferRingRegistration { RingAddress = (ulong)memory, RingEntries = Count, GroupId = GroupId };
        int result = ring.Register(RegisterPbufRing, &registration, 1);
        if (result < 0)
        {
            Munmap(memory, _size);
            _entries = null;
            throw new IoUringException("io_uring_register(IORING_REGISTER_PBUF_RING)", -result);
        }

        _registered = true;

        // Pinned: the kernel writes into it whenever bytes arrive.
        _memory = GC.AllocateUninitializedArray<byte>(Count * BufferSize, pinned: true);
        _start = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_memory));
        for (int id = 0; id < Count; id++)
        {
            Provide(id);
        }
    }

    /// <summary>The <paramref name="length"/> bytes a completion with buffer <paramref name="id"/> received.</summary>
    public ReadOnlySpan<byte> Data(int id, int length) => new(_start + (id * BufferSize), length);

    /// <summary>Gives buffer <paramref name="id"/> back to the kernel (its bytes were copied out, or are no longer wanted).</summary>
    public void Provide(int id)
    {
        ProvidedBuffer* entry = &_entries[_tail & (Count - 1)];
        entry->Address = (ulong)(_start + (id * BufferSize));
        entry->Length = BufferSize;
        entry->BufferId = (ushort)id;

        // Release: the entry is visible before the tail that publishes it (the tail overlays the first entry's last field).
        _tail++;
        Volatile.Write(ref *(ushort*)((byte*)_entries + 14), _tail);
    }

    /// <summary>The kernel found no buffer for <paramref name="waiter"/>: it is told at the end of the turn (<see cref="ResumeWaiters"/>).</summary>
    public void OnExhausted(IIoUringBufferWaiter waiter) => _waiting.Add(waiter);

    /// <summary>At the end of a loop turn: re-arms the receives that found no buffer (every buffer is back by then).</summary>
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

        if (_entries is not null)
        {
            Munmap((nint)_entries, _size);
            _entries = null;
        }
    }
}

/// <summary>A connection whose multishot receive ended because the loop's buffer ring was empty.</summary>
internal interface IIoUringBufferWaiter
{
    /// <summary>Buffers are available again: arm the receive again if it is still wanted.</summary>
    void OnBuffersAvailable();
}
