using System;
using System.IO;

namespace Falconet.Transport;

/// <summary>The peer reset the connection (or closed it while data was being sent).</summary>
public sealed class ConnectionResetException : IOException
{
    /// <summary>Creates the exception.</summary>
    public ConnectionResetException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }
}
