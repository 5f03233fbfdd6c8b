namespace Falconet.Transport.Tls;

/// <summary>
/// A listener of the TLS decorator: runs each accepted connection's handshake (<see cref="TlsHandshake"/>) and hands out only
/// connections whose handshake completed; <see cref="PreparingListener{TPreparation}"/> holds the accepting, the deadlines,
/// the limit and the unbinding.
/// </summary>
internal sealed class TlsConnectionListener(IConnectionListener inner, TlsServerSettings settings, ListenerContext context)
    : PreparingListener<TlsHandshake>(inner, context)
{
    protected override TlsHandshake Create(TransportConnection accepted, long now) => new(this, accepted, settings, now);

    protected override void LogAborted(int count) => TlsLog.HandshakesAborted(Logger, count);
}
