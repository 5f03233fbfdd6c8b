using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;

namespace Falconet.Transport.Sockets;

/// <summary>The one reusable send operation of a connection: the segments go out in gathered calls, repeated until every byte is sent.</summary>
/// <remarks>
/// On Linux the pool's blocks (pinned) go out in the transport's own non-blocking <c>sendmsg</c> of up to IOV_MAX
/// buffers (<see cref="SocketSendNative"/>), with nothing allocated; the kernel takes what its send buffer holds. Only
/// when the buffer is full, or for memory that is not a pool block, does a send go through the event args, which wait
/// for the socket to take more; that call gathers at most <see cref="TransportConnection.DefaultMaxGatheredSegments"/>
/// segments, the most .NET gathers without allocating.
/// </remarks>
internal sealed unsafe class SocketSender : SocketOperation, IValueTaskSource
{
    /// <summary>Segments per call through the event args: what .NET's sockets gather on the stack.</summary>
    internal const int MaxSegmentsPerEventArgsCall = TransportConnection.DefaultMaxGatheredSegments;

    private readonly List<ArraySegment<byte>> _segments = new(MaxSegmentsPerEventArgsCall);
    private readonly SafeSocketHandle _handle;
    private ReadOnlySequence<byte> _remaining;

    public SocketSender(SocketConnection connection, IoLane? lane)
        : base(connection, lane)
    {
        _handle = connection.Socket.SafeHandle;
    }

    /// <summary>The most segments one send gathers without allocating: IOV_MAX where the transport's own call is made.</summary>
    internal static int MaxGatheredSegments => SocketSendNative.IsSupported ? SocketSendNative.MaxVectors : MaxSegmentsPerEventArgsCall;

    protected override string Kind => "send";

    public ValueTask SendAsync(in ReadOnlySequence<byte> buffers, CancellationToken ct)
    {
        if (buffers.IsEmpty)
        {
            return default;
        }

        short token = Begin(ct);
        _remaining = buffers;
        if (SendUntilPending(out Exception? error))
        {
            return new ValueTask(this, token);
        }

        Release();
        EndSynchronously();
        return error is null ? default : ValueTask.FromException(error);
    }

    protected override void OnCompleted(SocketAsyncEventArgs e)
    {
        // Runs on a socket engine thread; a partial send continues from here in a loop, never by recursion.
        Exception? error;
        if (Advance(SocketError, BytesTransferred, out error) && SendUntilPending(out error))
        {
            return;
        }

        Release();
        CompleteAsynchronously(0, error);
    }

    /// <summary>Issues sends until one is pending (true), or until all is sent or one failed (false; error set on failure).</summary>
    private bool SendUntilPending(out Exception? error)
    {
        while (true)
        {
            if (SocketSendNative.IsSupported)
            {
                switch (SendGathered())
                {
                    case Gathered.All:
                        error = null;
                        return false;
                    case Gathered.More:
                        continue;
                    case Gathered.Closed:
                        error = CreateException(SocketError.OperationAborted);
                        return false;
                }
            }

            bool pending;
            try
            {
                Configure();
                pending = Socket.SendAsync(this);
            }
            catch (ObjectDisposedException)
            {
                error = CreateException(SocketError.OperationAborted);
                return false;
            }

            if (pending)
            {
                error = null;
                return true;
            }

            if (!Advance(SocketError, BytesTransferred, out error))
            {
                return false;
            }
        }
    }

    private enum Gathered
    {
        /// <summary>Every byte is sent.</summary>
        All,

        /// <summary>The call took all it was given and more remains: gather again.</summary>
        More,

        /// <summary>The send buffer is full, the next segment is not a pool block, or the call failed: the event args go next (and report a failure as .NET maps it).</summary>
        EventArgs,

        /// <summary>The socket is closed locally.</summary>
        Closed,
    }

    /// <summary>One non-blocking gathered <c>sendmsg</c> of the pool blocks at the front of what remains.</summary>
    [SkipLocalsInit]
    private Gathered SendGathered()
    {
        IoVector* vectors = stackalloc IoVector[SocketSendNative.MaxVectors];
        int count = 0;
        long offered = 0;
        SequencePosition position = _remaining.Start;
        while (count < SocketSendNative.MaxVectors)
        {
            // Only a pool block is known to stay where it is (pinned slab) without a pin of its own.
            object? owner = position.GetObject();
            if (!_remaining.TryGet(ref position, out ReadOnlyMemory<byte> memory))
            {
                break;
            }

            if (memory.IsEmpty)
            {
                continue;
            }

            if (owner is not MemoryBlock)
            {
                break;
            }

            vectors[count].Base = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(memory.Span));
            vectors[count].Length = (nuint)memory.Length;
            offered += memory.Length;
            count++;
        }

        if (count == 0)
        {
            return Gathered.EventArgs;
        }

        bool added = false;
        nint sent;
        int errno;
        try
        {
            _handle.DangerousAddRef(ref added);
            sent = SocketSendNative.Send(_handle.DangerousGetHandle(), vectors, count, out errno);
        }
        catch (ObjectDisposedException)
        {
            return Gathered.Closed;
        }
        finally
        {
            if (added)
            {
                _handle.DangerousRelease();
            }
        }

        if (sent < 0)
        {
            return errno == SocketSendNative.Interrupted ? Gathered.More : Gathered.EventArgs;
        }

        _remaining = _remaining.Slice(sent);
        if (_remaining.IsEmpty)
        {
            return Gathered.All;
        }

        // Less than offered: the send buffer is full, and the event args wait until it has room.
        return sent < offered ? Gathered.EventArgs : Gathered.More;
    }

    /// <summary>Drops the bytes a call sent; true when more remain to send.</summary>
    private bool Advance(SocketError socketError, int sent, out Exception? error)
    {
        if (socketError != SocketError.Success)
        {
            error = CreateException(socketError);
            return false;
        }

        if (sent <= 0)
        {
            error = CreateException(SocketError.ConnectionAborted);
            return false;
        }

        error = null;
        _remaining = _remaining.Slice(sent);
        return !_remaining.IsEmpty;
    }

    /// <summary>Points the event args at what remains: one buffer, or a list of array segments for a gathered send.</summary>
    private void Configure()
    {
        if (!_remaining.IsSingleSegment)
        {
            _segments.Clear();
            foreach (ReadOnlyMemory<byte> memory in _remaining)
            {
                if (memory.IsEmpty)
                {
                    continue;
                }

                // Memory that is not array-backed ends the gathered call; it goes alone in the next one.
                if (!MemoryMarshal.TryGetArray(memory, out ArraySegment<byte> segment))
                {
                    break;
                }

                _segments.Add(segment);
                if (_segments.Count == MaxSegmentsPerEventArgsCall)
                {
                    break;
                }
            }

            if (_segments.Count > 1)
            {
                SetBuffer(null, 0, 0);
                BufferList = _segments;
                return;
            }
        }

        if (BufferList is not null)
        {
            BufferList = null;
        }

        SetBuffer(MemoryMarshal.AsMemory(FirstNonEmpty(_remaining)));
    }

    private static ReadOnlyMemory<byte> FirstNonEmpty(in ReadOnlySequence<byte> sequence)
    {
        foreach (ReadOnlyMemory<byte> memory in sequence)
        {
            if (!memory.IsEmpty)
            {
                return memory;
            }
        }

        return default;
    }

    private void Release()
    {
        _remaining = default;
        _segments.Clear();
    }

    public void GetResult(short token) => GetResultCore(token);

    public ValueTaskSourceStatus GetStatus(short token) => GetStatusCore(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        OnCompletedCore(continuation, state, token, flags);
}
