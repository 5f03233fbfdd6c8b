using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;

namespace Falconet.Http.Http1;

/// <summary>
/// Flush coalescing: an application's flush (<see cref="HttpResponse.FlushAsync"/>, <see cref="HttpResponse.CompleteAsync"/>)
/// made while its handler still runs synchronously on the connection's thread is held. Its bytes leave with the send the
/// connection makes once the handler returns (one send for every response of a pipelined batch, and for a chunked
/// response's body and its last chunk), or, when the handler goes asynchronous first, in a send the connection makes at
/// once (<see cref="TakeOverHeldBytes"/>). A flush made after the handler went asynchronous, or at the write-behind bound,
/// sends at once. So the bytes wait only while the handler keeps the connection's thread, and a client waiting for
/// streamed bytes gets them.
/// </summary>
/// <remarks>
/// Measured on ASP.NET Core minimal APIs, whose string and JSON results flush at the end of every response: one send per
/// request instead of two without pipelining, one per batch instead of one per response with it (docs/aspnetcore.md,
/// "Flushes"). The output buffer is used by one thread at a time: the connection's, or the thread running the handler.
/// The held bytes are the one exception: after the handler went asynchronous, the connection copies them out (appends
/// by the handler do not touch bytes already written) and sends the copy, and whoever flushes next first waits for that
/// send, so no two sends are ever in flight and no byte leaves twice.
/// </remarks>
internal sealed partial class Http1OutputBuffer
{
    private const int NotHolding = 0;
    private const int Holding = 1;
    private const int TakenOver = 2;

    // Who sends the held bytes: the next send (Holding), or the connection, whose send of a copy of them must complete
    // before anything else is sent (TakenOver).
    private int _hold;
    private long _heldLength;
    private int _handlerThread;
    private Task? _takeOver;
    private BlockChain? _takeOverCopy;

    /// <summary>Starts the synchronous part of a handler call on the thread with the managed id <paramref name="threadId"/> (the caller's): its application flushes may be held.</summary>
    public void BeginHandlerCall(int threadId) => _handlerThread = threadId;

    /// <summary>Ends the synchronous part of a handler call (it returned, completed or not, or threw).</summary>
    public void EndHandlerCall() => _handlerThread = 0;

    /// <summary>
    /// An application's flush: sends everything buffered, as <see cref="FlushAsync"/>, unless it is held for the batch's send
    /// (see the class remarks); a held flush completes at once.
    /// </summary>
    public ValueTask FlushOrHoldAsync(CancellationToken cancellationToken)
    {
        if (_handlerThread == Environment.CurrentManagedThreadId && _chain.Length != 0 && !IsOverLimit && _hold != TakenOver)
        {
            _heldLength = _chain.Length;
            Volatile.Write(ref _hold, Holding);
            return default;
        }

        return FlushAsync(cancellationToken);
    }

    /// <summary>
    /// Called by the connection once a handler went asynchronous: when it holds flushed bytes, sends them now, from a copy,
    /// so a client waiting for them is not kept waiting until the handler's next flush. Null when nothing is held. The task
    /// completes when the send did; a failed send fails the next flush too.
    /// </summary>
    public Task? TakeOverHeldBytes()
    {
        if (Volatile.Read(ref _hold) != Holding)
        {
            return null;
        }

        // Published before the claim: a flush that sees TakenOver waits for it.
        var sent = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _takeOver = sent.Task;
        if (Interlocked.CompareExchange(ref _hold, TakenOver, Holding) != Holding)
        {
            // The handler flushed first, from another thread, and sent the held bytes with its own.
            return null;
        }

        BlockChain copy = _takeOverCopy ??= new BlockChain(_chain.Pool);
        CopyHeldBytes(copy);
        _ = SendTakenOverAsync(copy, sent);
        return sent.Task;
    }

    /// <summary>
    /// Before a send: the held bytes go with it (true), or the connection took them over and its send must complete first
    /// (false: <see cref="FlushAfterTakeOverAsync"/>).
    /// </summary>
    private bool TryReleaseHold()
    {
        int hold = Interlocked.CompareExchange(ref _hold, NotHolding, Holding);
        return hold != TakenOver;
    }

    /// <summary>Waits for the connection's send of the held bytes, drops them (they are out), then sends the rest.</summary>
    private async ValueTask FlushAfterTakeOverAsync(CancellationToken cancellationToken)
    {
        // A failed send fails this flush too (the connection is broken), and every later one.
        await _takeOver!.ConfigureAwait(false);
        _chain.Consume(_chain.GetSequence().GetPosition(_heldLength));
        _takeOver = null;
        Volatile.Write(ref _hold, NotHolding);
        await FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Copies the first <see cref="_heldLength"/> bytes of the chain into <paramref name="copy"/>. The handler may be
    /// appending on another thread meanwhile: appends write past these bytes and never change the blocks before the last
    /// one or a block's start, and nothing consumes the chain until the copy is sent.
    /// </summary>
    private void CopyHeldBytes(BlockChain copy)
    {
        long remaining = _heldLength;
        MemoryBlock block = _chain.Head!;
        while (true)
        {
            int start = block.Start;
            int count = (int)Math.Min(remaining, block.End - start);
            copy.Write(block.Memory.Span.Slice(start, count));
            remaining -= count;
            if (remaining == 0)
            {
                return;
            }

            block = block.NextBlock!;
        }
    }

    private async Task SendTakenOverAsync(BlockChain copy, TaskCompletionSource sent)
    {
        try
        {
            ReadOnlySequence<byte> data = copy.GetSequence();
            ValueTask send = _transport.SendAsync(data);
            if (send.IsCompleted)
            {
                send.GetAwaiter().GetResult();
            }
            else
            {
                _rates?.SendStarted(data.Length);
                try
                {
                    await send.ConfigureAwait(false);
                }
                finally
                {
                    _rates?.SendEnded();
                }
            }
        }
        catch (Exception exception)
        {
            copy.Dispose();
            sent.SetException(exception);
            return;
        }

        copy.Dispose();
        sent.SetResult();
    }
}
