using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;
using Falconet.Transport;

namespace Falconet.Http.Http1;

/// <summary>
/// A receive started while an asynchronous handler runs, so that a client that goes away (end of stream or reset) is
/// noticed before the handler writes: its outcome aborts the <see cref="RequestAbortSignal"/>. Bytes it receives are
/// not lost: the next reader of the input (a body read, or the connection loop) takes the receive over and appends them.
/// One per connection, reused; arming it allocates nothing (a pool block, cached delegates).
/// </summary>
/// <remarks>
/// The receive lands in a block of its own rather than the input's tail, which the handler may be consuming on another
/// thread meanwhile. Its completion only records the outcome; the taker commits the bytes on its own thread.
/// </remarks>
internal sealed class DisconnectWatch : IValueTaskSource<int>
{
    private readonly TransportConnection _transport;
    private readonly RequestAbortSignal _signal;
    private readonly Action _onReceived;
    private ManualResetValueTaskSourceCore<int> _outcome;
    private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter _receive;
    private MemoryBlock? _block;

    public DisconnectWatch(TransportConnection transport, RequestAbortSignal signal)
    {
        _transport = transport;
        _signal = signal;
        _onReceived = OnReceived;
    }

    /// <summary>Starts the receive into a block of its own; the caller owns the input's receive slot for it.</summary>
    public void Arm()
    {
        _outcome.Reset();
        _block = _transport.Pool.Rent();
        ValueTask<int> receive;
        try
        {
            receive = _transport.ReceiveAsync(_block.Memory);
        }
        catch (Exception exception)
        {
            Complete(0, exception);
            return;
        }

        _receive = receive.ConfigureAwait(false).GetAwaiter();
        if (_receive.IsCompleted)
        {
            OnReceived();
        }
        else
        {
            _receive.UnsafeOnCompleted(_onReceived);
        }
    }

    /// <summary>The outcome of the receive (the byte count, 0 at end of stream, or its exception), once it completes.</summary>
    public ValueTask<int> Take() => new(this, _outcome.Version);

    /// <summary>Hands over the block the receive wrote into (after <see cref="Take"/> completed); null when already handed over.</summary>
    public MemoryBlock? ReleaseBlock()
    {
        MemoryBlock? block = _block;
        _block = null;
        return block;
    }

    private void OnReceived()
    {
        int received = 0;
        Exception? error = null;
        try
        {
            received = _receive.GetResult();
        }
        catch (Exception exception)
        {
            error = exception;
        }

        _receive = default;
        Complete(received, error);
    }

    private void Complete(int received, Exception? error)
    {
        if (received == 0)
        {
            _signal.Abort();
        }

        if (error is null)
        {
            _outcome.SetResult(received);
        }
        else
        {
            _outcome.SetException(error);
        }
    }

    int IValueTaskSource<int>.GetResult(short token) => _outcome.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _outcome.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _outcome.OnCompleted(continuation, state, token, flags);
}
