using System;
using System.Buffers;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;
using Falconet.Transport;

namespace Falconet.Benchmarks;

/// <summary>
/// A connection with no kernel under it, for the connection-loop benchmarks: a receive waits until
/// <see cref="CompleteReceive"/> delivers what the peer sends next (<see cref="Fill"/>), every send completes at once and
/// is only counted, and scheduled work runs inline.
/// </summary>
internal abstract class InMemoryConnection(SlabMemoryPool pool) : TransportConnection, IValueTaskSource<int>
{
    private static readonly IPEndPoint s_endPoint = new(IPAddress.Loopback, 0);
    private ManualResetValueTaskSourceCore<int> _receive;
    private Memory<byte> _buffer;
    private bool _pending;

    public long SentBytes { get; private set; }

    public override EndPoint? LocalEndPoint => s_endPoint;

    public override EndPoint? RemoteEndPoint => s_endPoint;

    public override SlabMemoryPool Pool => pool;

    /// <summary>Writes what the peer sends next into <paramref name="buffer"/>; 0: the peer closes.</summary>
    protected abstract int Fill(Span<byte> buffer);

    /// <summary>The peer stops sending (a stopped receive or an abort): the next receive returns 0.</summary>
    protected abstract void End();

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        if (_pending)
        {
            throw new InvalidOperationException("A receive is already pending.");
        }

        _buffer = buffer;
        _pending = true;
        _receive.Reset();
        return new ValueTask<int>(this, _receive.Version);
    }

    /// <summary>Completes the pending receive with what the peer sends next.</summary>
    public void CompleteReceive()
    {
        if (!_pending)
        {
            throw new InvalidOperationException("The connection waited for something other than a receive.");
        }

        int count = Fill(_buffer.Span);
        _pending = false;
        _buffer = default;
        _receive.SetResult(count);
    }

    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
    {
        SentBytes += buffers.Length;
        return default;
    }

    public override void Schedule(IThreadPoolWorkItem workItem) => workItem.Execute();

    public override void StopReceiving() => End();

    public override void ShutdownSend()
    {
    }

    public override void Abort() => End();

    public override ValueTask DisposeAsync() => default;

    public int GetResult(short token) => _receive.GetResult(token);

    public ValueTaskSourceStatus GetStatus(short token) => _receive.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _receive.OnCompleted(continuation, state, token, flags);
}
