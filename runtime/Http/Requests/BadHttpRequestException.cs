using System;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace Falconet.Http;

/// <summary>A request the server must refuse: carries the reason, and the HTTP status to answer before closing the connection.</summary>
public sealed class BadHttpRequestException : Exception
{
    /// <summary>Creates the exception for <paramref name="reason"/>; the message and status come from <see cref="RequestRejections"/>.</summary>
    public BadHttpRequestException(RequestRejectionReason reason)
        : base(RequestRejections.GetMessage(reason))
    {
        Reason = reason;
    }

    /// <summary>Creates the exception for <paramref name="reason"/> with the error that caused it.</summary>
    public BadHttpRequestException(RequestRejectionReason reason, Exception? innerException)
        : base(RequestRejections.GetMessage(reason), innerException)
    {
        Reason = reason;
    }

    /// <summary>Why the request was refused.</summary>
    public RequestRejectionReason Reason { get; }

    /// <summary>The HTTP status code to answer with.</summary>
    public int StatusCode => RequestRejections.GetStatusCode(Reason);

    // Kept out of line, so a check on the hot path costs a compare and a call that is never taken; nothing is
    // formatted until the throw.
    [DoesNotReturn]
    [StackTraceHidden]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void Throw(RequestRejectionReason reason) => throw new BadHttpRequestException(reason);
}
