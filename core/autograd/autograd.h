#pragma once
// The autograd API: grad modes, backward/grad, custom functions, anomaly
// mode, gradcheck.
#include <brasa/autograd/engine.h>
#include <brasa/autograd/function.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/gradcheck.h>
#include <brasa/autograd/node.h>
