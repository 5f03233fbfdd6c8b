namespace Falconet.Transport;

/// <summary>
/// The connection limit of whoever accepts from a listener, for a decorator that holds accepted connections before it
/// hands them out (the TLS decorator during handshakes): each one it holds takes a place of the limit, so connections in
/// progress and open ones together stay within it.
/// </summary>
internal interface IConnectionAdmission
{
    /// <summary>Takes a place for <paramref name="accepted"/>; false when none is left, and the connection was refused (closed and counted).</summary>
    bool TryAdmit(TransportConnection accepted);

    /// <summary>Gives back the place of a connection that ended, or that is handed out (its acceptor takes a place of its own then).</summary>
    void Release();
}
