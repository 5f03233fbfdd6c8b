using System;
using System.IO;

namespace Falconet.Transport;

/// <summary>An operation was attempted on, or pending during, a connection that was aborted or disposed locally.</summary>
public sealed class ConnectionAbortedException : IOException
{
    /// <summary>Creates the exception.</summary>
    public ConnectionAbortedException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }
}
