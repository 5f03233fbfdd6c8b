using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Transport.Sockets;

/// <summary>The one reusable send operation of a connection: all segments go out in one gathered call, repeated until every byte is sent.</summary>
internal sealed class SocketSender : SocketOperation, IValueTaskSource
{
    /// <summary>Segments per gathered call; below the system's IOV_MAX (1024 on Linux).</summary>
    internal const int MaxSegmentsPerCall = 512;

    private readonly List<ArraySegment<byte>> _segments = new();
    private ReadOnlySequence<byte> _remaining;

    public SocketSender(SocketConnection connection, IoLane? lane)
        : base(connection, lane)
    {
    }

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
                if (_segments.Count == MaxSegmentsPerCall)
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
