using System;
using System.Diagnostics.CodeAnalysis;

namespace Falconet.Http;

/// <summary>A request the server must refuse: carries the HTTP status to answer before closing the connection.</summary>
public sealed class BadHttpRequestException : Exception
{
    /// <summary>Creates the exception with its response status (400, 413, 414, 431, 501 or 505).</summary>
    public BadHttpRequestException(string message, int statusCode)
        : base(message)
    {
        StatusCode = statusCode;
    }

    /// <summary>Creates a 400 Bad Request exception.</summary>
    public BadHttpRequestException()
        : this("Bad request.", 400)
    {
    }

    /// <summary>Creates a 400 Bad Request exception with a message.</summary>
    public BadHttpRequestException(string message)
        : this(message, 400)
    {
    }

    /// <summary>Creates a 400 Bad Request exception with a message and an inner exception.</summary>
    public BadHttpRequestException(string message, Exception innerException)
        : base(message, innerException)
    {
        StatusCode = 400;
    }

    /// <summary>The HTTP status code to answer with.</summary>
    public int StatusCode { get; }

    [DoesNotReturn]
    internal static void Throw(string message, int statusCode = 400) => throw new BadHttpRequestException(message, statusCode);
}
